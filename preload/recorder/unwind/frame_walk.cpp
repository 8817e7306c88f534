#include "recorder/unwind/frame_walk.h"

#include <pthread.h>

#include <algorithm>
#include <cstring>

namespace {

using gpuleak::unwind::FrameRule;
using gpuleak::unwind::WalkMemo;
using gpuleak::unwind::WalkRecord;

int no_backtrace(void**, int) {
    return 0;
}

[[gnu::always_inline]] inline uint64_t word_at(uint64_t at) {
    uint64_t v;
    std::memcpy(&v, reinterpret_cast<const void*>(at), sizeof v);
    return v;
}

// Whether every stack word `prev` read from frame `from` outward still holds what it read, where
// it decided the walk (a restored rbp that no frame further out reads may be anything). All of them
// lie above the current stack pointer, in this thread's stack.
bool still_valid(const WalkRecord& prev, unsigned from) {
    for (unsigned f = from; f + 1 < prev.n; ++f) {
        uint64_t differ = word_at(prev.sp[f + 1] - sizeof(uint64_t)) ^ prev.ip[f + 1];
        if (prev.bp_slot[f] && (prev.flags[f + 1] & WalkRecord::kBpMatters))
            differ |= word_at(prev.bp_slot[f]) ^ prev.bp[f + 1];
        if (prev.cfa_slot[f]) differ |= word_at(prev.cfa_slot[f]) ^ prev.sp[f + 1];
        if (differ) return false;
    }
    return !prev.end_ra_at || word_at(prev.end_ra_at) == 0;
}

// Marks, from frame `n - 1` inward, where rbp's value decides the rest of the walk; `matters` is
// the answer for frame n.
void mark_bp_matters(WalkRecord& r, unsigned n, bool matters) {
    for (unsigned f = n; f-- > 0;) {
        uint8_t flags = r.flags[f] & (WalkRecord::kUsesBp | WalkRecord::kRestoresBp);
        if (flags & WalkRecord::kUsesBp)
            matters = true;
        else if (flags & WalkRecord::kRestoresBp)
            matters = false;
        r.flags[f] = flags | (matters ? WalkRecord::kBpMatters : 0);
    }
}

// Copies frames [from, from + count) of one record to another, at `to`.
void copy_frames(WalkRecord& dst, unsigned to, const WalkRecord& src, unsigned from,
                 unsigned count) {
    if (count == 0) return; // the whole stack reused: nothing new to write
    for (uint64_t* WalkRecord::*array : {&WalkRecord::ip, &WalkRecord::sp, &WalkRecord::bp,
                                         &WalkRecord::bp_slot, &WalkRecord::cfa_slot})
        std::memcpy(dst.*array + to, src.*array + from, count * sizeof(uint64_t));
    std::memcpy(dst.flags + to, src.flags + from, count);
}

// Frames n.. are the previous walk's from frame p on: copied into `frames`, and the memo's record
// becomes this walk's.
int reuse(uint64_t* frames, int max, unsigned n, WalkMemo& memo, WalkRecord& cur, WalkRecord& prev,
          unsigned p) {
    const unsigned rest = prev.n - p;
    const unsigned take = std::min(rest, static_cast<unsigned>(max) - n);
    std::memcpy(frames + n, prev.ip + p, take * sizeof *frames);
    ++memo.reused;
    WalkRecord* record = &prev;
    if (n == p) {
        // The common case (a loop allocating from one place: n = p = 0): the new inner frames take
        // the old ones' places, and the outer part stays where it is.
        copy_frames(prev, 0, cur, 0, n);
    } else {
        copy_frames(cur, n, prev, p, take);
        cur.generation = prev.generation;
        cur.end_ra_at = prev.end_ra_at;
        memo.previous ^= 1;
        record = &cur;
    }
    record->n = n + take;
    record->complete = prev.complete && take == rest;
    if (!record->complete) record->end_ra_at = 0;
    mark_bp_matters(*record, n, record->flags[n] & WalkRecord::kBpMatters);
    return static_cast<int>(record->n);
}

} // namespace

extern "C" {
gpuleak::unwind::BacktraceFn gpuleak_unwind_fallback = no_backtrace;

int gpuleak_walk_frames(uint64_t* frames, int max, const gpuleak::unwind::WalkContext* context,
                        uint64_t ip, uint64_t sp, uint64_t bp) {
    if (!context->cache) return -1;
    const uint64_t high = context->stack_high;
    // Another stack (a signal's alternate stack, a coroutine's): libunwind knows its way there.
    if (sp < context->stack_low || sp >= high || max <= 0) return -1;
    gpuleak::unwind::RuleCache& cache = *context->cache;
    cache.check_generation();
    const unsigned generation = cache.generation();

    // This walk is recorded in `cur`; `prev` (the last one) may supply its outer part.
    WalkMemo* memo = context->memo;
    WalkRecord* cur = nullptr;
    WalkRecord* prev = nullptr;
    if (memo && static_cast<unsigned>(max) <= memo->capacity) {
        cur = &memo->records[memo->previous ^ 1];
        prev = &memo->records[memo->previous];
        if (prev->n == 0 || prev->generation != generation) prev = nullptr;
    }
    unsigned p = 0; // prev's frames below sp are behind us

    // Every stack slot read lies between the frame's stack pointer and the stack's end.
    auto load = [&](uint64_t at, uint64_t& out) {
        if (at < sp || at > high - sizeof(uint64_t)) [[unlikely]]
            return false;
        out = word_at(at);
        return true;
    };
    int n = 0;
    bool complete = false;
    uint64_t end_ra_at = 0;
    // Frame n's registers and what leaving it read, for the next walk.
    auto record = [&](uint64_t frame_bp, uint64_t bp_slot, uint64_t cfa_slot, uint8_t flags) {
        if (!cur) return;
        cur->ip[n] = ip;
        cur->sp[n] = sp;
        cur->bp[n] = frame_bp;
        cur->bp_slot[n] = bp_slot;
        cur->cfa_slot[n] = cfa_slot;
        cur->flags[n] = flags;
    };
    while (n < max) {
        frames[n] = ip;
        if (prev) {
            while (p < prev->n && prev->sp[p] < sp)
                ++p;
            if (p < prev->n && prev->sp[p] == sp && prev->ip[p] == ip &&
                (prev->bp[p] == bp || !(prev->flags[p] & WalkRecord::kBpMatters))) {
                // Only where prev holds as many frames as this walk may still take.
                if ((prev->complete || n + (prev->n - p) >= static_cast<unsigned>(max)) &&
                    still_valid(*prev, p))
                    return reuse(frames, max, static_cast<unsigned>(n), *memo, *cur, *prev, p);
                prev = nullptr; // one try per walk: the rest is walked
            }
        }
        const uint64_t frame_bp = bp;
        const FrameRule rule = cache.lookup(ip);
        uint64_t cfa, bp_slot = 0, cfa_slot = 0;
        uint8_t flags = 0;
        if (!(rule.flags & FrameRule::kSlow)) [[likely]] {
            const bool from_bp = rule.flags & FrameRule::kFromBp;
            cfa = (from_bp ? bp : sp) + static_cast<int64_t>(rule.cfa_offset);
            flags = from_bp ? WalkRecord::kUsesBp : 0;
            if (rule.flags & FrameRule::kBpAtCfa) {
                bp_slot = cfa + rule.bp_offset;
                if (!load(bp_slot, bp)) return -1;
                flags |= WalkRecord::kRestoresBp;
            }
        } else if (rule.cfa() == FrameRule::Cfa::DerefBpPlus) {
            cfa_slot = bp + static_cast<int64_t>(rule.cfa_offset);
            if (!load(cfa_slot, cfa)) return -1;
            flags = WalkRecord::kUsesBp;
            if (rule.bp() != FrameRule::Bp::Same) {
                bp_slot = (rule.bp() == FrameRule::Bp::AtBpPlus ? bp : cfa) + rule.bp_offset;
                if (!load(bp_slot, bp)) return -1;
                flags |= WalkRecord::kRestoresBp;
            }
        } else if (rule.cfa() == FrameRule::Cfa::EndOfStack) {
            record(frame_bp, 0, 0, 0);
            ++n;
            complete = true;
            break;
        } else {
            return -1;
        }
        // The return address, just below the CFA; the CFA above this frame's stack pointer.
        if (cfa < sp + sizeof(uint64_t) || cfa > high) return -1;
        record(frame_bp, bp_slot, cfa_slot, flags);
        ip = word_at(cfa - sizeof(uint64_t));
        sp = cfa;
        ++n;
        if (ip == 0) { // the outermost frame, as libunwind ends there
            complete = true;
            end_ra_at = cfa - sizeof(uint64_t);
            break;
        }
    }
    if (cur) {
        cur->n = static_cast<unsigned>(n);
        cur->generation = generation;
        cur->complete = complete;
        cur->end_ra_at = end_ra_at;
        mark_bp_matters(*cur, cur->n, false);
        memo->previous ^= 1;
    }
    return n;
}
}

namespace gpuleak::unwind {

bool current_stack_bounds(uint64_t& low, uint64_t& high) {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return false;
    void* address = nullptr;
    size_t size = 0;
    bool ok = pthread_attr_getstack(&attr, &address, &size) == 0 && address && size;
    pthread_attr_destroy(&attr);
    if (!ok) return false;
    low = reinterpret_cast<uint64_t>(address);
    high = low + size;
    return true;
}

} // namespace gpuleak::unwind
