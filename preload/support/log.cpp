#include "support/log.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <strings.h>
#include <unistd.h>

namespace gpuleak::log {
namespace {

// A message is built on the stack and leaves in one write(2): no heap, no lock, no stdio buffer
// shared with the application, and lines of two threads never interleave.
class Line {
public:
    static constexpr size_t kCapacity = 4096;
    static constexpr std::string_view kCut = "...";

    void append(std::string_view text) {
        size_t room = kCapacity - kCut.size() - 1 - used_; // "...\n" always fits
        if (text.size() > room) {
            text = text.substr(0, room);
            cut_ = true;
        }
        std::memcpy(buffer_ + used_, text.data(), text.size());
        used_ += text.size();
    }
    void append(uint64_t value, bool negative = false) {
        char digits[21];
        char* end = digits + sizeof digits;
        char* p = end;
        do {
            *--p = static_cast<char>('0' + value % 10);
            value /= 10;
        } while (value);
        if (negative) *--p = '-';
        append(std::string_view(p, static_cast<size_t>(end - p)));
    }
    void append(int64_t value) {
        // The magnitude of INT64_MIN does not fit an int64_t: negate in unsigned arithmetic.
        if (value < 0)
            append(0 - static_cast<uint64_t>(value), true);
        else
            append(static_cast<uint64_t>(value));
    }
    void rewind(size_t to) {
        used_ = to;
        cut_ = false;
    }
    size_t size() const { return used_; }

    void write_to_stderr() {
        if (cut_) append_unchecked(kCut);
        append_unchecked("\n");
        int saved_errno = errno; // a hook that logs must not change what the application sees
        for (size_t done = 0; done < used_;) {
            ssize_t n = ::write(STDERR_FILENO, buffer_ + done, used_ - done);
            if (n > 0)
                done += static_cast<size_t>(n);
            else if (n < 0 && errno == EINTR)
                continue;
            else
                break;
        }
        errno = saved_errno;
    }

private:
    void append_unchecked(std::string_view text) {
        std::memcpy(buffer_ + used_, text.data(), text.size());
        used_ += text.size();
    }

    char buffer_[kCapacity];
    size_t used_ = 0;
    bool cut_ = false;
};

void append(Line& line, const Arg& arg) {
    switch (arg.kind()) {
    case Arg::Kind::signed_int:
        line.append(arg.signed_value());
        return;
    case Arg::Kind::unsigned_int:
        line.append(arg.unsigned_value());
        return;
    case Arg::Kind::text:
        line.append(arg.text());
        return;
    }
}

// "{}" takes the next argument, "{{" and "}}" are braces; false for anything else ("{:x}", a lone
// brace, more "{}" than arguments). Arguments left over are ignored.
bool format_into(Line& line, std::string_view format, std::initializer_list<Arg> args) {
    const Arg* next = args.begin();
    size_t literal_start = 0;
    for (size_t i = 0; i < format.size(); ++i) {
        char c = format[i];
        if (c != '{' && c != '}') continue;
        line.append(format.substr(literal_start, i - literal_start));
        bool doubled = i + 1 < format.size() && format[i + 1] == c;
        if (doubled) {
            line.append(std::string_view(&format[i], 1));
        } else if (c == '{' && i + 1 < format.size() && format[i + 1] == '}') {
            if (next == args.end()) return false;
            append(line, *next++);
        } else {
            return false;
        }
        ++i;
        literal_start = i + 1;
    }
    line.append(format.substr(literal_start));
    return true;
}

void emit(std::string_view format, std::initializer_list<Arg> args) {
    Line line;
    line.append("gpuleak: ");
    size_t prefix = line.size();
    if (!format_into(line, format, args)) {
        // A format that does not fit its arguments: say what was meant.
        line.rewind(prefix);
        line.append(format);
    }
    line.write_to_stderr();
}

// The lowest level printed, from GPULEAK_LOG (read once); one past debug's for "off".
int threshold() {
    static const int level = [] {
        const char* text = std::getenv("GPULEAK_LOG");
        if (!text || !*text || !strcasecmp(text, "warn")) return static_cast<int>(Level::warn);
        if (!strcasecmp(text, "debug")) return static_cast<int>(Level::debug);
        if (!strcasecmp(text, "info")) return static_cast<int>(Level::info);
        if (!strcasecmp(text, "off")) return static_cast<int>(Level::warn) + 1;
        emit("GPULEAK_LOG={}: not one of debug, info, warn, off; using warn", {Arg(text)});
        return static_cast<int>(Level::warn);
    }();
    return level;
}

} // namespace

bool enabled(Level level) {
    return static_cast<int>(level) >= threshold();
}

void write(Level level, std::string_view format, std::initializer_list<Arg> args) {
    if (enabled(level)) emit(format, args);
}

} // namespace gpuleak::log
