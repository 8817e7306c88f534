#include <zstd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuleak/format/reader.h"
#include "gpuleak/format/writer.h"

namespace gpuleak::format {

TraceFile::~TraceFile() {
    if (fd_ >= 0) ::close(fd_);
    ZSTD_freeDCtx(zstd_);
}

bool TraceFile::open(const std::string& path) {
    // Non-blocking, so a FIFO given by mistake is refused instead of waiting for a writer forever;
    // only a regular file has the size the block index relies on.
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        error_ = std::string("cannot open: ") + std::strerror(errno);
        return false;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        error_ = "not a regular file (a trace is read from a file, not a pipe or device)";
        return false;
    }
    fd_ = fd;
    file_size_ = static_cast<uint64_t>(st.st_size);
    return check_header();
}

bool TraceFile::open_memory(std::vector<uint8_t> bytes) {
    memory_ = std::move(bytes);
    file_size_ = memory_.size();
    return check_header();
}

bool TraceFile::read_at(uint64_t offset, void* out, size_t n) {
    if (offset > file_size_ || file_size_ - offset < n) return false;
    if (fd_ < 0) {
        if (n) std::memcpy(out, memory_.data() + offset, n);
        return true;
    }
    auto* p = static_cast<uint8_t*>(out);
    while (n) {
        ssize_t r = ::pread(fd_, p, n, static_cast<off_t>(offset));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= static_cast<size_t>(r);
        offset += static_cast<uint64_t>(r);
    }
    return true;
}

bool TraceFile::check_header() {
    FileHeader h{};
    if (!read_at(0, &h, sizeof h)) {
        error_ = "not a gpuleak trace (file shorter than the 16-byte header)";
        return false;
    }
    if (std::memcmp(h.magic, kFileMagic, sizeof kFileMagic) != 0) {
        error_ = "not a gpuleak trace (bad magic)";
        return false;
    }
    if (h.version < kOldestReadableVersion || h.version > kFormatVersion) {
        error_ = "unsupported trace format version " + std::to_string(h.version) +
                 " (this gpuleak-report reads " + std::to_string(kOldestReadableVersion) + " to " +
                 std::to_string(kFormatVersion) + ")";
        return false;
    }
    if (h.header_size < sizeof h || h.header_size > 4096 || h.header_size > file_size_) {
        error_ = "corrupt file header (header size " + std::to_string(h.header_size) + ")";
        return false;
    }
    header_size_ = h.header_size;
    version_ = h.version;
    return true;
}

void TraceFile::index_blocks() {
    blocks_.clear();
    uint64_t offset = header_size_;
    std::vector<uint8_t> payload;
    while (offset < file_size_) {
        BlockHeader h{};
        if (file_size_ - offset < sizeof h || !read_at(offset, &h, sizeof h)) {
            damage_ = "incomplete block header at offset " + std::to_string(offset);
            return;
        }
        if (h.magic != kBlockMagic) {
            damage_ = "bad block magic at offset " + std::to_string(offset);
            return;
        }
        if (h.stored_size > kMaxBlockPayload || h.raw_size > kMaxBlockPayload ||
            (!(h.flags & kBlockZstd) && h.stored_size != h.raw_size) || (h.flags & ~kBlockZstd) ||
            h.last_ts < h.first_ts) {
            damage_ = "corrupt block header at offset " + std::to_string(offset);
            return;
        }
        uint64_t payload_offset = offset + sizeof h;
        if (file_size_ - payload_offset < h.stored_size) {
            damage_ = "block at offset " + std::to_string(offset) + " is cut short (" +
                      std::to_string(file_size_ - payload_offset) + " of " +
                      std::to_string(h.stored_size) + " bytes)";
            return;
        }
        payload.resize(h.stored_size);
        if (!read_at(payload_offset, payload.data(), h.stored_size)) {
            damage_ = "read error at offset " + std::to_string(payload_offset);
            return;
        }
        if (block_checksum(h, payload.data(), payload.size()) != h.checksum) {
            damage_ = "checksum mismatch in block at offset " + std::to_string(offset);
            return;
        }
        blocks_.push_back({payload_offset, h.stored_size, h.raw_size, h.flags, h.thread_index,
                           h.sequence, h.first_ts, h.last_ts});
        offset = payload_offset + h.stored_size;
    }
}

bool TraceFile::load(const BlockRef& b, std::vector<uint8_t>& payload) {
    std::vector<uint8_t>& stored = (b.flags & kBlockZstd) ? scratch_ : payload;
    stored.resize(b.stored_size);
    if (!read_at(b.offset, stored.data(), b.stored_size)) {
        error_ = "read error at offset " + std::to_string(b.offset);
        return false;
    }
    if (!(b.flags & kBlockZstd)) return true;
    payload.resize(b.raw_size);
    if (!zstd_ && !(zstd_ = ZSTD_createDCtx())) {
        error_ = "out of memory for decompression";
        return false;
    }
    size_t n =
        ZSTD_decompressDCtx(zstd_, payload.data(), payload.size(), stored.data(), stored.size());
    if (ZSTD_isError(n) || n != b.raw_size) {
        error_ = "cannot decompress block at offset " + std::to_string(b.offset);
        return false;
    }
    return true;
}

} // namespace gpuleak::format
