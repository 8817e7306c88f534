#include "recorder/unwind/frame_walk.h"

#include <pthread.h>

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

// Copies frames [from, from + count) of one record to another, at `to`.
void copy_frames(WalkRecord& dst, unsigned to, const WalkRecord& src, unsigned from,
                 unsigned count) {
    if (count == 0) return;
    for (uint64_t* WalkRecord::*array :
         {&WalkRecord::ip, &WalkRecord::sp, &WalkRecord::bp, &WalkRecord::cfa, &WalkRecord::bp_slot,
          &WalkRecord::cfa_slot})
        std::memcpy(dst.*array + to, src.*array + from, count * sizeof(uint64_t));
    std::memcpy(dst.uses_bp + to, src.uses_bp + from, count);
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

    // This walk is recorded in `cur`; `prev` (the last one) may know the way out of its frames.
    // Their arrays are held in locals declared not to alias, or every store would reload them.
    WalkMemo* memo = context->memo;
    WalkRecord* cur = nullptr;
    WalkRecord* prev = nullptr;
    unsigned cur_index = 0;
    if (memo && static_cast<unsigned>(max) <= memo->capacity) {
        cur_index = memo->previous ^ 1;
        cur = &memo->records[cur_index];
        prev = &memo->records[memo->previous];
        if (prev->n == 0 || prev->generation != generation) prev = nullptr;
    }
    WalkRecord none;
    const WalkRecord& from = prev ? *prev : none;
    unsigned prev_n = prev ? prev->n : 0;
    const uint64_t* __restrict prev_ip = from.ip;
    const uint64_t* __restrict prev_sp = from.sp;
    const uint64_t* __restrict prev_bp = from.bp;
    const uint64_t* __restrict prev_cfa = from.cfa;
    const uint64_t* __restrict prev_bp_slot = from.bp_slot;
    const uint64_t* __restrict prev_cfa_slot = from.cfa_slot;
    const uint8_t* __restrict prev_uses_bp = from.uses_bp;
    uint64_t* __restrict out = frames;
    unsigned p = 0; // prev's frames below sp are behind us

    // Where this walk's frames are recorded (nowhere without a memo).
    WalkRecord scratch;
    struct {
        uint64_t* __restrict ip;
        uint64_t* __restrict sp;
        uint64_t* __restrict bp;
        uint64_t* __restrict cfa;
        uint64_t* __restrict bp_slot;
        uint64_t* __restrict cfa_slot;
        uint8_t* __restrict uses_bp;
    } to;
    auto record_into = [&](WalkRecord& r) {
        to = {r.ip, r.sp, r.bp, r.cfa, r.bp_slot, r.cfa_slot, r.uses_bp};
    };
    record_into(cur ? *cur : scratch);

    int n = 0;
    unsigned recorded = 0; // frames of cur with their step
    // Frame n's registers and the way out of it, for the next walk.
    auto record = [&](uint64_t cfa, uint64_t bp_slot, uint64_t cfa_slot, bool uses_bp) {
        if (!cur) return;
        to.ip[n] = ip;
        to.sp[n] = sp;
        to.bp[n] = bp;
        to.cfa[n] = cfa;
        to.bp_slot[n] = bp_slot;
        to.cfa_slot[n] = cfa_slot;
        to.uses_bp[n] = uses_bp;
        recorded = static_cast<unsigned>(n) + 1;
    };
    // Every stack slot read lies between the frame's stack pointer and the stack's end.
    auto in_stack = [&](uint64_t at) { return at >= sp && at <= high - sizeof(uint64_t); };
    auto load = [&](uint64_t at, uint64_t& out) {
        if (!in_stack(at)) [[unlikely]]
            return false;
        out = word_at(at);
        return true;
    };
    while (n < max) {
        out[n] = ip;
        while (p < prev_n && prev_sp[p] < sp)
            ++p;
        if (p < prev_n && prev_sp[p] == sp && prev_ip[p] == ip) {
            // The previous walk passed through this frame with this return address: it left it and
            // the frames after it the same way where their rules read nothing that changed (rbp,
            // a saved CFA) and each return address read leads to its next frame. Those addresses
            // were checked against this thread's stack then; the loads here are independent.
            unsigned f = p;
            uint64_t next_bp = bp, next_ip = 0;
            // At the same index as in the previous walk, the frames are copied once the run's
            // length is known (and the record not at all where the run takes the rest of the
            // previous walk); elsewhere, frame by frame (runs there are short). Two loops, so that
            // the long one stores nothing.
            const bool same_index = static_cast<unsigned>(n) == p;
            auto run = [&]<bool kStore>() {
                while (f < prev_n &&
                       static_cast<unsigned>(n) + (f - p) < static_cast<unsigned>(max)) {
                    if (prev_uses_bp[f] && prev_bp[f] != next_bp) break;
                    if (prev_cfa_slot[f] && word_at(prev_cfa_slot[f]) != prev_cfa[f]) break;
                    if constexpr (kStore) {
                        const unsigned at = static_cast<unsigned>(n) + (f - p);
                        out[at] = prev_ip[f];
                        to.ip[at] = prev_ip[f];
                        to.sp[at] = prev_sp[f];
                        to.bp[at] = prev_bp[f];
                        to.cfa[at] = prev_cfa[f];
                        to.bp_slot[at] = prev_bp_slot[f];
                        to.cfa_slot[at] = prev_cfa_slot[f];
                        to.uses_bp[at] = prev_uses_bp[f];
                    }
                    if (prev_bp_slot[f]) next_bp = word_at(prev_bp_slot[f]);
                    next_ip = word_at(prev_cfa[f] - sizeof(uint64_t));
                    ++f;
                    if (f == prev_n || next_ip != prev_ip[f]) break;
                }
            };
            if (same_index)
                run.operator()<false>();
            else
                run.operator()<true>();
            if (const unsigned count = f - p) {
                // (A previous walk to match means a memo, so cur is set.)
                if (same_index) {
                    std::memcpy(out + n, prev_ip + p, count * sizeof *out);
                    if (f == prev_n) {
                        // The rest of the previous walk, at the same places (a loop allocating
                        // from one call site: all of it): the new frames before it take the old
                        // ones' places, and the previous record becomes this walk's.
                        copy_frames(*prev, 0, *cur, 0, p);
                        cur = prev;
                        cur_index ^= 1;
                        record_into(*cur);
                        prev_n = 0; // nothing further to match, and cur is overwritten from here
                    } else {
                        copy_frames(*cur, p, *prev, p, count);
                    }
                }
                recorded = static_cast<unsigned>(n) + count;
                memo->reused += count;
                n += static_cast<int>(count);
                sp = prev_cfa[f - 1];
                bp = next_bp;
                ip = next_ip;
                if (ip == 0) break; // the outermost frame, as libunwind ends there
                continue;
            }
        }
        uint64_t cfa, bp_slot = 0, cfa_slot = 0;
        bool uses_bp;
        {
            const FrameRule rule = cache.lookup(ip);
            if (!(rule.flags & FrameRule::kSlow)) [[likely]] {
                uses_bp = rule.flags & FrameRule::kFromBp;
                cfa = (uses_bp ? bp : sp) + static_cast<int64_t>(rule.cfa_offset);
                if (rule.flags & FrameRule::kBpAtCfa) bp_slot = cfa + rule.bp_offset;
            } else if (rule.cfa() == FrameRule::Cfa::DerefBpPlus) {
                uses_bp = true;
                cfa_slot = bp + static_cast<int64_t>(rule.cfa_offset);
                if (!load(cfa_slot, cfa)) return -1;
                if (rule.bp() != FrameRule::Bp::Same)
                    bp_slot = (rule.bp() == FrameRule::Bp::AtBpPlus ? bp : cfa) + rule.bp_offset;
            } else if (rule.cfa() == FrameRule::Cfa::EndOfStack) {
                ++n;
                break;
            } else {
                return -1;
            }
            // The return address, just below the CFA; the CFA above this frame's stack pointer.
            if (cfa < sp + sizeof(uint64_t) || cfa > high) return -1;
            if (bp_slot && !in_stack(bp_slot)) return -1;
            record(cfa, bp_slot, cfa_slot, uses_bp);
            if (bp_slot) bp = word_at(bp_slot);
        }
        ip = word_at(cfa - sizeof(uint64_t));
        sp = cfa;
        ++n;
        if (ip == 0) break; // the outermost frame, as libunwind ends there
    }
    if (cur) {
        cur->n = recorded;
        cur->generation = generation;
        memo->previous = cur_index;
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
