"""Writes a line-table fixture for the decoder test: raw line tables of stdlib code objects and
what CPython's own PyCode_Addr2Line says for every instruction offset.

usage: python dump_linetables.py OUT.json [MAX_CODE_OBJECTS]

Output: {"version_hex": N, "python": "3.x.y", "codes": [{"name", "firstlineno", "table" (hex),
"lines": [line at offset -2, 0, 2, 4, ...], and from 3.11 on "starts": [for offsets 0, 2, 4, ...,
where the run of instructions with the same co_positions() entry begins] and "positions": [[first
offset, line, end line, column, end column] per run of one co_positions() entry, -1 for None]}]}.
Sources are compiled, never imported.
"""
import ctypes
import json
import os
import sys
import sysconfig

ADDR2LINE = ctypes.pythonapi.PyCode_Addr2Line
ADDR2LINE.argtypes = [ctypes.py_object, ctypes.c_int]
ADDR2LINE.restype = ctypes.c_int

# Shapes the stdlib rarely has: long line gaps (several lnotab pairs, long-form entries),
# negative line deltas, wide columns, lines with no location.
SYNTHETIC = (
    "def gap():\n    a = 1\n" + "\n" * 700 + "    return a\n"
    "def back(x):\n    return (x +\n            1) if x else (\n        x - 1)\n"
    "def wide():\n    return "
    + " + ".join(["v%d" % i for i in range(60)]) + "\n"
    "def loops(n):\n    total = 0\n    for i in range(n):\n"
    "        if i % 3:\n            continue\n"
    "        total += i\n    else:\n        pass\n    while n:\n        n -= 1\n    return total\n"
    "def handler():\n    try:\n        pass\n    except Exception as e:\n        raise\n"
    "    finally:\n        x = 2\n    with open('f') as f, open('g') as g:\n        pass\n"
    "class C:\n    def m(self):\n        return [y for y in range(3) if y]\n"
    "lam = lambda q: (q,\n  q)\n"
)


def code_objects(code):
    yield code
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            yield from code_objects(const)


def table_of(code):
    if sys.version_info < (3, 10):
        return code.co_lnotab
    return code.co_linetable


def position_starts(code):
    """Per code unit, the offset of the first unit of its run of equal positions."""
    starts, previous, start = [], None, 0
    for unit, position in enumerate(code.co_positions()):
        if unit == 0 or position != previous:
            previous, start = position, 2 * unit
        starts.append(start)
    return starts


def position_runs(code):
    """[first offset, line, end line, column, end column] per run of equal positions, -1 for None."""
    runs, previous = [], None
    for unit, position in enumerate(code.co_positions()):
        if unit == 0 or position != previous:
            previous = position
            runs.append([2 * unit] + [-1 if v is None else v for v in position])
    return runs


def sources():
    yield "<synthetic>", SYNTHETIC
    stdlib = sysconfig.get_paths()["stdlib"]
    for name in sorted(os.listdir(stdlib)):
        path = os.path.join(stdlib, name)
        if name.endswith(".py") and os.path.isfile(path):
            with open(path, "rb") as f:
                yield path, f.read()


def main():
    out_path = sys.argv[1]
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 4000
    codes = []
    for path, source in sources():
        try:
            module = compile(source, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        for code in code_objects(module):
            nbytes = len(code.co_code)
            lines = [ADDR2LINE(code, offset) for offset in range(-2, nbytes, 2)]
            entry = {
                "name": "%s:%s" % (os.path.basename(path), code.co_name),
                "firstlineno": code.co_firstlineno,
                "table": table_of(code).hex(),
                "lines": lines,
            }
            if hasattr(code, "co_positions"):
                entry["starts"] = position_starts(code)
                entry["positions"] = position_runs(code)
            codes.append(entry)
        if len(codes) >= limit:
            break
    with open(out_path, "w") as f:
        json.dump({"version_hex": sys.hexversion, "python": sys.version.split()[0],
                   "codes": codes}, f)
    print("%s: %d code objects, %d offsets -> %s" % (
        sys.version.split()[0], len(codes), sum(len(c["lines"]) for c in codes), out_path))


if __name__ == "__main__":
    main()
