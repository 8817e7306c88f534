#!/usr/bin/env python3
"""Reads a JUnit file with Python's XML parser, as CI systems do, and checks it: a testsuites root
with one testsuite, one testcase per gate, the counts in the attributes matching the test cases,
and `text` in some failure's message or body.
Usage: check_junit.py FILE TESTS FAILURES TEXT"""
import sys
import xml.etree.ElementTree as ET


def main():
    path, tests, failures, text = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    root = ET.parse(path).getroot()
    problems = []
    if root.tag != "testsuites":
        problems.append(f"root is <{root.tag}>")
    suites = root.findall("testsuite")
    if len(suites) != 1:
        problems.append(f"{len(suites)} test suites")
    cases = root.findall("./testsuite/testcase")
    failed = [c for c in cases if c.find("failure") is not None]
    if len(cases) != tests:
        problems.append(f"{len(cases)} test cases, expected {tests}")
    if len(failed) != failures:
        problems.append(f"{len(failed)} failures, expected {failures}")
    for el in [root] + suites:
        if int(el.get("tests", -1)) != len(cases) or int(el.get("failures", -1)) != len(failed):
            problems.append(f"<{el.tag}> counts {el.get('tests')}/{el.get('failures')}")
    if not all(c.get("name") and c.get("classname") for c in cases):
        problems.append("a test case without name or classname")
    found = any(text in (f.find("failure").get("message", "") + (f.find("failure").text or ""))
                for f in failed)
    if failures and not found:
        problems.append(f"no failure mentions {text!r}")
    for p in problems:
        print("FAIL " + p)
    print(f"check_junit: {len(cases)} test cases, {len(failed)} failures, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
