#!/usr/bin/env python3
"""Dumps line-table fixtures under each interpreter of one version and runs the C++ decoder test
on them (zero mismatches against PyCode_Addr2Line required).

usage: run_linetables.py --test BINARY --out-dir DIR --only VERSION [--pyenv-root DIR]
Exit status: the test's, or 77 (ctest's skip code) when VERSION is not installed.
"""
import argparse
import os
import subprocess
import sys

import pythons

DUMP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dump_linetables.py")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--test", required=True)
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--only", required=True)
    parser.add_argument("--pyenv-root", default=pythons.default_pyenv_root())
    args = parser.parse_args()

    found = pythons.find(args.only, args.pyenv_root)
    if not found:
        print("SKIP %s: not installed" % args.only)
        return pythons.SKIP
    os.makedirs(args.out_dir, exist_ok=True)
    status = 0
    for label, exe in found:
        fixture = os.path.join(args.out_dir, "linetable_%s.json" % label)
        subprocess.run([exe, DUMP, fixture], check=True)
        env = dict(os.environ, GPULEAK_LINETABLE_FIXTURE=fixture)
        rc = subprocess.run([args.test, "--gtest_filter=LineTableFixture.*"], env=env).returncode
        print("%s: decoder test %s" % (label, "PASS" if rc == 0 else "FAIL"))
        status = status or rc
    return status


if __name__ == "__main__":
    sys.exit(main())
