// libFuzzer entry: the whole of gpuleak-report's reading path (analysis/analyze.h: definitions,
// loops, replay, verdicts, hints; both renderers) on one untrusted file.
// Any crash, hang or runaway allocation here is a bug in the analyzer: a trace file is input from
// another process and may be cut short, damaged or hostile.
//
// Every block's checksum is recomputed before reading: otherwise nearly every mutation would be a
// checksum mismatch and the record decoder behind it would never be reached. (Damaged checksums are
// covered by tests/robustness/analyzer_input_test.cpp.)
//
// Modules named by the input are not given to the symbolizer: that would make the fuzzer open
// arbitrary paths on this machine, and elfutils' parsing of real binaries is not what is under
// test.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "gpuleak/format/records.h"
#include "gpuleak/format/writer.h"

#include "analysis/analyze.h"
#include "render/renderers.h"

using namespace gpuleak::analyzer;

namespace {

// The reader takes a path, so the input lives in an anonymous memory file reused across runs.
std::string input_path(const uint8_t* data, size_t size) {
    static const int fd = memfd_create("gpuleak-fuzz-trace", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, 0) != 0) return {};
    size_t done = 0;
    while (done < size) {
        ssize_t n = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
        if (n <= 0) return {};
        done += static_cast<size_t>(n);
    }
    return "/proc/self/fd/" + std::to_string(fd);
}

// Re-seals each well-framed block so the fuzzer's mutations reach the decoder behind the checksum.
std::vector<uint8_t> with_valid_checksums(const uint8_t* data, size_t size) {
    using gpuleak::format::BlockHeader;
    using gpuleak::format::FileHeader;
    std::vector<uint8_t> bytes(data, data + size);
    if (size < sizeof(FileHeader)) return bytes;
    FileHeader file;
    std::memcpy(&file, bytes.data(), sizeof file);
    size_t offset = file.header_size >= sizeof file && file.header_size <= size ? file.header_size
                                                                                : sizeof file;
    while (size - offset >= sizeof(BlockHeader)) {
        BlockHeader h;
        std::memcpy(&h, bytes.data() + offset, sizeof h);
        size_t payload = offset + sizeof h;
        if (h.magic != gpuleak::format::kBlockMagic || h.stored_size > size - payload) break;
        h.checksum = gpuleak::format::block_checksum(h, bytes.data() + payload, h.stored_size);
        std::memcpy(bytes.data() + offset, &h, sizeof h);
        offset = payload + h.stored_size;
    }
    return bytes;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<uint8_t> sealed = with_valid_checksums(data, size);
    std::string path = input_path(sealed.data(), sealed.size());
    if (path.empty()) return 0;
    Analysis analysis;
    AnalyzeOptions options;
    options.read_modules = false;
    std::string error;
    if (!analyze(path, options, analysis, error)) return 0;
    std::vector<Report> reports{std::move(analysis.report)};
    std::ostringstream out;
    render_json(reports, out);
    render_text(reports[0], {}, out);
    return 0;
}
