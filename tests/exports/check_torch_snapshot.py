#!/usr/bin/env python3
"""Checks a snapshot written by `gpuleak-report --format torch-snapshot` the way PyTorch's viewers
read it (pytorch.org/memory_viz's MemoryViz.js and `python -m torch.cuda._memory_viz`):
  - pickle protocol 2..4, and only opcodes MemoryViz.js's own unpickler implements (anything else
    makes it throw "UNKNOWN OPCODE"); Python's pickle loads it;
  - the structure those tools index: segments (device, address, total_size, allocated_size,
    stream, blocks with size, requested_size, state, frames of filename/line/name), device_traces
    (a list per device of entries with action, addr or device_free, size, time_us, frames);
  - blocks are contiguous and fill their segment (what segsum asserts);
  - the Allocator State History replay: going backwards from the final segments, every free has
    its block and segment, every alloc finds the block it made and every segment_alloc the
    segment, as MemoryView.simulate_memory needs;
  - the Active Memory Timeline pairing of alloc and free_completed by address;
  - against the JSON report: live blocks add up to the device memory live at the end, one segment
    per live allocation, one alloc per allocation (unless the history overflowed), one oom per
    failed allocation, and the leaking function in the frames of live blocks.
Usage: check_torch_snapshot.py SNAPSHOT.pickle REPORT.json LEAK_FUNCTION"""
import json
import pickle
import pickletools
import sys

# The opcodes MemoryViz.js's unpickle() handles.
VIEWER_OPCODES = {"PROTO", "APPEND", "APPENDS", "LIST", "TUPLE", "NEWFALSE", "NEWTRUE", "NONE",
                  "BINGET", "BININT", "BININT1", "BININT2", "EMPTY_DICT", "EMPTY_LIST", "FRAME",
                  "LONG1", "LONG_BINGET", "MARK", "MEMOIZE", "BINPUT", "LONG_BINPUT", "SETITEMS",
                  "SETITEM", "DICT", "SHORT_BINUNICODE", "BINUNICODE", "STOP", "EMPTY_TUPLE",
                  "TUPLE1", "TUPLE2", "TUPLE3", "BINFLOAT"}
ACTIONS = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
           "segment_map", "segment_unmap", "snapshot", "oom", "annotate"}


def main():
    path, report_path, leak_function = sys.argv[1:4]
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
        return cond

    data = open(path, "rb").read()
    used = set()
    for op, arg, pos in pickletools.genops(data):
        used.add(op.name)
        if op.name == "PROTO":
            check(2 <= arg <= 4, f"pickle protocol {arg} (the viewer reads 2..4)")
        if op.name == "LONG1":
            # More than 8 bytes: the viewer makes a BigInt, which its arithmetic cannot mix.
            check(-(1 << 63) <= arg < (1 << 63), "an integer the viewer reads as BigInt")
    check(used <= VIEWER_OPCODES, f"opcodes the viewer cannot read: {sorted(used - VIEWER_OPCODES)}")
    snap = pickle.loads(data)
    report = json.load(open(report_path))
    s = report["summary"]

    check(isinstance(snap, dict) and {"segments", "device_traces"} <= snap.keys(),
          "a dict with segments and device_traces")
    check(isinstance(snap.get("allocator_settings"), dict), "allocator_settings")
    frame_ok = lambda fr: (isinstance(fr, list) and all(
        isinstance(f, dict) and isinstance(f.get("filename"), str) and isinstance(f.get("line"), int)
        and isinstance(f.get("name"), str) for f in fr))
    live_bytes = live_blocks = 0
    leak_seen = False
    segs = {}  # device -> {address: size}
    blocks = {}  # device -> {address: size}
    for i, seg in enumerate(snap["segments"]):
        for k, t in (("device", int), ("address", int), ("total_size", int),
                     ("allocated_size", int), ("active_size", int), ("requested_size", int),
                     ("stream", int), ("segment_type", str), ("blocks", list), ("frames", list)):
            check(isinstance(seg.get(k), t), f"segment {i}: {k}")
        check(seg.get("segment_pool_id") == (0, 0), f"segment {i}: segment_pool_id (0, 0)")
        addr, allocated, requested = seg["address"], 0, 0
        for b in seg["blocks"]:
            check(b.get("address", addr) == addr, f"segment {i}: blocks are contiguous")
            check(b["state"] in ("active_allocated", "active_pending_free", "inactive"),
                  f"segment {i}: block state {b['state']!r}")
            check(frame_ok(b["frames"]), f"segment {i}: block frames")
            check(0 <= b["requested_size"] <= b["size"], f"segment {i}: requested_size <= size")
            if b["state"] == "active_allocated":
                allocated += b["requested_size"]
                live_bytes += b["size"]
                live_blocks += 1
                blocks.setdefault(seg["device"], {})[b.get("address", addr)] = b["size"]
                leak_seen = leak_seen or any(f["name"] == leak_function for f in b["frames"])
            addr += b["size"]
        check(addr == seg["address"] + seg["total_size"], f"segment {i}: blocks fill the segment")
        check(seg["allocated_size"] == allocated, f"segment {i}: allocated_size")
        d = segs.setdefault(seg["device"], {})
        check(seg["address"] not in d, f"segment {i}: two segments at one address")
        d[seg["address"]] = seg["total_size"]
    check(live_bytes == s["live_bytes_end"],
          f"live blocks hold {live_bytes}, the report says {s['live_bytes_end']} live at the end")
    check(live_blocks == s["live_count_end"],
          f"{live_blocks} live blocks, the report says {s['live_count_end']} allocations")
    check(leak_seen or s["live_bytes_end"] == 0, f"{leak_function} in the live blocks' frames")

    allocs = ooms = 0
    for dev, trace in enumerate(snap["device_traces"]):
        last_t = -1
        for j, e in enumerate(trace):
            a = e.get("action")
            check(a in ACTIONS, f"device {dev} entry {j}: action {a!r}")
            check(isinstance(e.get("size"), int) and isinstance(e.get("time_us"), int)
                  and isinstance(e.get("stream"), int), f"device {dev} entry {j}: size, time_us, stream")
            check(isinstance(e.get("device_free" if a == "oom" else "addr"), int),
                  f"device {dev} entry {j}: {'device_free' if a == 'oom' else 'addr'}")
            check(frame_ok(e.get("frames", [])), f"device {dev} entry {j}: frames")
            check(e["time_us"] >= last_t, f"device {dev} entry {j}: time goes back")
            last_t = e["time_us"]
            allocs += a == "alloc"
            ooms += a == "oom"
        # MemoryView.simulate_memory, from the end back to the start.
        seg = dict(segs.get(dev, {}))
        blk = dict(blocks.get(dev, {}))
        pending = {}
        for j in range(len(trace) - 1, -1, -1):
            e = trace[j]
            a, addr = e["action"], e.get("addr")
            inside = lambda x: any(s0 <= x < s0 + n for s0, n in seg.items())
            if a == "free_completed":
                check(addr not in blk, f"device {dev} entry {j}: freed block still live after")
                check(inside(addr), f"device {dev} entry {j}: freed block outside every segment")
                blk[addr] = e["size"]
                pending[addr] = True
            elif a == "free_requested":
                check(addr in blk, f"device {dev} entry {j}: free_requested without its block")
            elif a == "alloc":
                check(addr in blk, f"device {dev} entry {j}: alloc whose block is not there")
                blk.pop(addr, None)
            elif a == "segment_free":
                check(addr not in seg, f"device {dev} entry {j}: freed segment still there after")
                seg[addr] = e["size"]
            elif a == "segment_alloc":
                check(addr in seg, f"device {dev} entry {j}: segment_alloc whose segment is gone")
                seg.pop(addr, None)
        # process_alloc_data: alloc and free_completed paired by address.
        open_ = {}
        for e in trace:
            if e["action"] == "alloc":
                check(e["addr"] not in open_, f"device {dev}: an address allocated twice")
                open_[e["addr"]] = e["size"]
            elif e["action"] == "free_completed" and e["addr"] in open_:
                check(open_.pop(e["addr"]) == e["size"], f"device {dev}: a free of another size")
    # Device memory as the report counts it: device, array and graph memory.
    device_allocs = sum(x["allocations"] for x in report["sites"]
                        if {"device", "array", "graph"} & set(x["kinds"]))
    if not snap["allocator_settings"].get("trace_alloc_overflowed"):
        check(allocs == device_allocs, f"{allocs} alloc entries, the report has {device_allocs} "
              "device allocations")
    check(ooms == min(s["failed_allocations"], 10 ** 9),
          f"{ooms} oom entries, {s['failed_allocations']} failed allocations")
    for f in failures[:30]:
        print("FAIL " + f)
    print(f"check_torch_snapshot: {len(snap['segments'])} segments, "
          f"{sum(len(t) for t in snap['device_traces'])} trace entries, opcodes {sorted(used)}, "
          f"{len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
