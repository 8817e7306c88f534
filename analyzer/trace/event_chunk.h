// What the merge (thread_merge.h) hands to the reader of its events (event_stream.h), possibly from
// another core: records in the merge's order, each packed into one cache line. A decoded
// format::Record is 336 bytes; reading those where another core wrote them cost about 25 ns an
// event (docs/performance-changes.md, D1), one line an event costs a few. The few records with
// strings or lists (markers, failed allocations, code objects, modules...) travel whole beside
// the packed ones, and so do the merge's block errors, so that the reader meets everything in one
// order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuleak/format/reader.h"
#include "trace/merge_output.h"

namespace gpuleak::analyzer {

struct alignas(64) PackedEntry {
    enum class Kind : uint8_t {
        Timed,      // an event, packed
        Untimed,    // a definition, packed (stack nodes)
        Whole,      // a record in EventChunk::records; field[0] its index
        BlockError, // EventChunk::records[field[0]].text says what; flag: malformed
    };
    uint64_t ts;
    // Per tag (pack() and unpack() are the one place that says which field is which); for the
    // kinds that refer to a block, field[4] is its BlockRef.
    uint64_t field[5];
    uint32_t thread;
    uint32_t lane;
    int32_t device;
    Kind kind;
    format::Tag tag;
    uint8_t small[2]; // api and memory kind, or api and address space, or a flag
};
static_assert(sizeof(PackedEntry) == 64);

// A run of the merge's output. Chunks are reused: their vectors keep their capacity, and the
// whole records their strings', so that a steady stream allocates nothing.
class EventChunk : public MergeOutput {
public:
    void clear() {
        size_ = 0;
        records_used_ = 0;
        last = false;
    }
    // Roomy enough to hand over rarely, small enough to stay in the caches while it is read.
    bool full() const { return size_ >= kEntries || records_used_ >= kRecords; }
    size_t size() const { return size_; }

    void event(uint32_t thread, uint32_t lane, const format::Record& r);
    void untimed(const format::BlockRef& block, uint32_t thread, const format::Record& r) override;
    void block_error(const format::BlockRef& block, uint32_t thread, bool malformed,
                     const std::string& error) override;

    // Makes what was added visible to another thread that takes the chunk under a lock.
    void publish();

    const PackedEntry& entry(size_t i) const { return entries_[i]; }
    // The record of a Timed or Untimed entry, unpacked into `out` (only its tag's fields are set),
    // or of a Whole one (a reference to the chunk's copy). Valid until the chunk is cleared.
    const format::Record& record(const PackedEntry& e, format::Record& out) const;
    const format::BlockRef& block(const PackedEntry& e) const {
        return *reinterpret_cast<const format::BlockRef*>(e.field[4]);
    }
    const std::string& error(const PackedEntry& e) const { return records_[e.field[0]].text; }

    bool last = false; // the merge ended with this chunk

    static constexpr size_t kEntries = 2048;
    static constexpr size_t kRecords = 256;

private:
    static PackedEntry make(PackedEntry::Kind kind, uint32_t thread, uint32_t lane,
                            format::Tag tag);
    void store(const PackedEntry& e);
    void whole(PackedEntry& e, const format::Record& r); // and stores it
    format::Record& next_record(PackedEntry& e);         // e.field[0] is its index

    // [0, size_) hold this chunk's entries; sized by the first store, in the merge's thread.
    std::vector<PackedEntry> entries_;
    size_t size_ = 0;
    std::vector<format::Record> records_; // [0, records_used_) belong to this chunk's entries
    size_t records_used_ = 0;
};

} // namespace gpuleak::analyzer
