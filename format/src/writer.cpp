#include "gpuleak/format/writer.h"

#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

namespace gpuleak::format {

FileHeader file_header(uint32_t version) {
    FileHeader h{};
    std::memcpy(h.magic, kFileMagic, sizeof h.magic);
    h.version = version;
    h.header_size = sizeof h;
    return h;
}

// --- sinks ---------------------------------------------------------------------------------------

namespace {

// Blocks SIGXFSZ around a write and takes back a SIGXFSZ that only that write raised.
class SigxfszGuard {
public:
    SigxfszGuard() {
        sigemptyset(&xfsz_);
        sigaddset(&xfsz_, SIGXFSZ);
        pthread_sigmask(SIG_BLOCK, &xfsz_, &old_);
        sigset_t pending;
        was_pending_ = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
    }
    ~SigxfszGuard() {
        if (raised_ && !was_pending_) {
            timespec zero{0, 0};
            siginfo_t info;
            sigtimedwait(&xfsz_, &info, &zero);
        }
        pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    void wrote(ssize_t result, int err) {
        if (result < 0 && err == EFBIG) raised_ = true;
    }

private:
    sigset_t xfsz_, old_;
    bool was_pending_ = false, raised_ = false;
};

uint64_t total_size(const Piece* pieces, size_t count) {
    uint64_t n = 0;
    for (size_t i = 0; i < count; ++i)
        n += pieces[i].size;
    return n;
}

} // namespace

int FileSink::create(const char* path) {
    close();
    int fd = ::open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return errno;
    fd_ = fd;
    size_ = 0;
    return 0;
}

void FileSink::close() {
    if (fd_ >= 0) ::close(fd_);
    abandon();
}

void FileSink::abandon() {
    fd_ = -1;
    size_ = 0;
}

int FileSink::append(const Piece* pieces, size_t count) {
    if (fd_ < 0) return EBADF;
    constexpr size_t kMaxPieces = 4;
    if (count > kMaxPieces) return EINVAL;
    iovec iov[kMaxPieces];
    size_t n = 0;
    for (size_t i = 0; i < count; ++i)
        if (pieces[i].size) iov[n++] = {const_cast<void*>(pieces[i].data), pieces[i].size};
    SigxfszGuard guard;
    const uint64_t start = size_;
    iovec* next = iov;
    while (n) {
        ssize_t w = ::writev(fd_, next, static_cast<int>(n));
        int err = errno;
        guard.wrote(w, err);
        if (w < 0 && err == EINTR) continue;
        if (w <= 0) {
            // Whole blocks or nothing: cut back what part of this one reached the file.
            if (ftruncate(fd_, static_cast<off_t>(start)) == 0) size_ = start;
            return w < 0 ? err : ENOSPC;
        }
        size_ += static_cast<uint64_t>(w);
        auto left = static_cast<size_t>(w);
        while (n && left >= next->iov_len) {
            left -= next->iov_len;
            ++next;
            --n;
        }
        if (n) {
            next->iov_base = static_cast<uint8_t*>(next->iov_base) + left;
            next->iov_len -= left;
        }
    }
    return 0;
}

uint64_t FileSink::limit() {
    rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) return rl.rlim_cur;
    return 0;
}

int MemorySink::append(const Piece* pieces, size_t count) {
    uint64_t n = total_size(pieces, count);
    if (bytes_.size() + n > fail_after_) return fail_error_;
    for (size_t i = 0; i < count; ++i) {
        auto* p = static_cast<const uint8_t*>(pieces[i].data);
        bytes_.insert(bytes_.end(), p, p + pieces[i].size);
    }
    return 0;
}

void MemorySink::fail_after(uint64_t bytes, int error) {
    fail_after_ = bytes;
    fail_error_ = error;
}

int NullSink::append(const Piece* pieces, size_t count) {
    bytes_ += total_size(pieces, count);
    return 0;
}

// --- the writer ----------------------------------------------------------------------------------

namespace {
// Room always kept below the size limit: the Capped block, then the TraceEnd block of a clean exit.
constexpr uint64_t kReservedBytes = 2 * TraceWriter::kSmallBlockBytes;
} // namespace

TraceWriter::TraceWriter(Sink& sink, const WriterOptions& options)
    : sink_(sink), options_(options) {}

TraceWriter::~TraceWriter() {
    ZSTD_freeCCtx(zstd_);
    if (compressed_) munmap(compressed_, compressed_capacity_);
}

void TraceWriter::reset(const WriterOptions& options) {
    options_ = options;
    bytes_ = 0;
    failed_ = capped_ = false;
}

WriteStatus TraceWriter::start() {
    FileHeader h = file_header();
    Piece piece{&h, sizeof h};
    return append(&piece, 1);
}

WriteStatus TraceWriter::append(const Piece* pieces, size_t count) {
    if (int err = sink_.append(pieces, count)) {
        failed_ = true;
        return {WriteStatus::Failed, err, 0, false};
    }
    bytes_ += total_size(pieces, count);
    return {};
}

bool TraceWriter::ensure_compression(size_t size) {
    if (!zstd_ && !(zstd_ = ZSTD_createCCtx())) return false;
    size_t bound = ZSTD_compressBound(size);
    if (bound <= compressed_capacity_) return true;
    if (compressed_) munmap(compressed_, compressed_capacity_);
    void* mem = mmap(nullptr, bound, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    compressed_ = mem == MAP_FAILED ? nullptr : static_cast<uint8_t*>(mem);
    compressed_capacity_ = compressed_ ? bound : 0;
    return compressed_ != nullptr;
}

namespace {
// A header for `size` bytes stored as they are; the checksum is set last.
BlockHeader raw_header(const BlockMeta& meta, uint32_t size) {
    BlockHeader h{};
    h.magic = kBlockMagic;
    h.stored_size = h.raw_size = size;
    h.thread_index = meta.thread_index;
    h.sequence = meta.sequence;
    h.first_ts = meta.first_ts;
    h.last_ts = meta.last_ts;
    return h;
}
} // namespace

FramedBlock TraceWriter::frame(const BlockMeta& meta, const uint8_t* payload, uint32_t size) {
    FramedBlock b{raw_header(meta, size), payload};
    if (options_.compress && size && ensure_compression(size)) {
        size_t n = ZSTD_compressCCtx(zstd_, compressed_, compressed_capacity_, payload, size, 1);
        if (!ZSTD_isError(n) && n < size) {
            b.stored = compressed_;
            b.header.stored_size = static_cast<uint32_t>(n);
            b.header.flags = kBlockZstd;
        }
    }
    b.header.checksum = block_checksum(b.header, b.stored, b.header.stored_size);
    return b;
}

WriteStatus TraceWriter::write_block(const BlockMeta& meta, const uint8_t* payload, uint32_t size,
                                     BlockRole role) {
    const bool closing = role == BlockRole::Closing;
    if (failed_ || size == 0 || size > kMaxBlockPayload || (capped_ && !closing))
        return {WriteStatus::Dropped, 0, 0, false};
    FramedBlock b = frame(meta, payload, size);
    uint64_t limit = options_.max_bytes;
    bool sink_limit = false;
    if (uint64_t own = sink_.limit(); own && (!limit || own < limit)) {
        limit = own;
        sink_limit = true;
    }
    const uint64_t reserve = closing ? 0 : kReservedBytes;
    if (limit && bytes_ + sizeof b.header + b.header.stored_size + reserve > limit) {
        if (capped_) return {WriteStatus::Dropped, 0, 0, false};
        return cap(limit, sink_limit, meta.last_ts);
    }
    Piece pieces[2] = {{&b.header, sizeof b.header}, {b.stored, b.header.stored_size}};
    return append(pieces, 2);
}

WriteStatus TraceWriter::cap(uint64_t limit, bool sink_limit, uint64_t ts) {
    capped_ = true;
    uint8_t payload[kSmallBlockBytes - sizeof(BlockHeader)];
    uint8_t* column_top = payload + sizeof payload - kTimeTrailerBytes;
    Encoder e(payload, column_top);
    put::capped(e, 0, bytes_);
    if (options_.clock) ts = options_.clock();
    uint32_t size = pack_block(payload, static_cast<uint32_t>(e.position() - payload), column_top,
                               static_cast<uint32_t>(column_top - e.column()));
    BlockHeader h = raw_header({kGlobalThreadIndex, kCappedSequence, ts, ts}, size);
    h.checksum = block_checksum(h, payload, h.stored_size);
    if (bytes_ + sizeof h + h.stored_size <= limit) {
        Piece pieces[2] = {{&h, sizeof h}, {payload, h.stored_size}};
        WriteStatus s = append(pieces, 2);
        if (s.kind == WriteStatus::Failed) return s;
    }
    return {WriteStatus::Capped, 0, limit, sink_limit};
}

} // namespace gpuleak::format
