#!/usr/bin/env python3
"""check_abi.py - libgoblin's ABI against the stored dump of the last
release (tests/abi/libgoblin.abi), with abidiff from abigail-tools.

Passes when the shared library is a compatible successor of the dump:
- nothing removed (abidiff's "incompatible" bit);
- functions and variables may be added;
- a type the public headers keep opaque (declared, not defined there)
  may change freely;
- a public type may change only in the one way the headers promise: a
  configuration struct (a name ending in _config) grows at its end
  (members are inserted after every old one, which moves none).
Anything else (a member moved, a type or parameter changed, a struct that
is not a config struct grew) fails, with abidiff's report.

Usage: check_abi.py ABIDIFF STORED.abi LIBGOBLIN.so HEADERS_DIR
       check_abi.py --dump ABIDW LIBGOBLIN.so HEADERS_DIR OUT.abi
(--dump makes the stored file at a release; see docs/abi.md.)
"""
import os
import re
import subprocess
import sys

ABIDIFF_ERROR, ABIDIFF_USAGE_ERROR = 1, 2
ABIDIFF_ABI_CHANGE, ABIDIFF_ABI_INCOMPATIBLE_CHANGE = 4, 8

STRUCTURE = [
    r"Functions changes summary: .*",
    r"Variables changes summary: .*",
    r"Function symbols changes summary: .*",
    r"Variable symbols changes summary: .*",
    r"\d+ Added functions?:",
    r"\d+ Added variables?:",
    r"\[A\] .*",
    r"\d+ functions? with some indirect sub-type change:",
    r"\d+ variables? with some indirect sub-type change:",
    r"\[C\] .* has some indirect sub-type changes?:",
    r"parameter \d+ of type .* has sub-type changes:",
    r"in pointed to type .*:",
    r"\d+ data member insertions?:",
]


def public_structs(headers):
    """Names of the structs the public headers define (not just declare)."""
    names = set()
    for h in os.listdir(headers):
        if h.endswith(".h"):
            with open(os.path.join(headers, h)) as f:
                names |= set(re.findall(r"^\s*struct (\w+) \{", f.read(),
                                        re.M))
    return names


def growth_only(report, public):
    """True when every change in the report is an addition, a change inside
    a type the public headers keep opaque, or a _config struct growing at
    its end."""
    struct, old_size, skip_deeper = None, None, None
    for raw in report.splitlines():
        line = raw.strip()
        if not line:
            continue
        depth = len(raw) - len(raw.lstrip())
        if skip_deeper is not None:
            if depth > skip_deeper:
                continue
            skip_deeper = None
        m = re.match(r"(?:Functions|Variables) changes summary: (\d+) Removed",
                     line) or \
            re.match(r"(?:Function|Variable) symbols changes summary: "
                     r"(\d+) Removed", line)
        if m and m.group(1) != "0":
            return False
        m = re.match(r"(?:in unqualified )?underlying type "
                     r"'(?:struct )?(\w+)'", line)
        if m:
            struct, old_size = m.group(1), None
            if struct not in public:
                skip_deeper = depth   # opaque: free to change
                continue
            if not struct.endswith("_config"):
                return False
            continue
        m = re.match(r"type size changed from (\d+) to (\d+) \(in bits\)",
                     line)
        if m:
            old_size = int(m.group(1))
            if struct is None or int(m.group(2)) < old_size:
                return False
            continue
        if line == "type size hasn't changed":
            old_size = 0
            continue
        # An inserted member that moved no other member (abidiff would list
        # the moves as "offset changed") lies at the end or in the tail
        # padding: callers zero-initialise config structs, so the library
        # reads zero there, the default.
        if re.match(r"'.*', at offset \d+ \(in bits\)", line):
            if old_size is None:
                return False
            continue
        if not any(re.fullmatch(p, line) for p in STRUCTURE):
            return False
    return True


def main():
    if sys.argv[1] == "--dump":
        abidw, so, headers, out = sys.argv[2:6]
        return subprocess.run([abidw, "--no-show-locs", "--no-corpus-path",
                               so, "--out-file", out]).returncode
    abidiff, stored, so, headers = sys.argv[1:5]
    res = subprocess.run([abidiff, "--no-show-locs", stored, so],
                         capture_output=True, text=True)
    rc = res.returncode
    if rc & (ABIDIFF_ERROR | ABIDIFF_USAGE_ERROR):
        print("FAIL abidiff could not compare:\n" + res.stdout + res.stderr)
        return 1
    if rc == 0:
        print("ABI: identical to the stored dump")
        return 0
    print(res.stdout)
    if rc & ABIDIFF_ABI_INCOMPATIBLE_CHANGE or not growth_only(res.stdout,
                                                        public_structs(headers)):
        print("FAIL an incompatible ABI change against %s (docs/abi.md says"
              " what to do)" % stored)
        return 1
    print("ABI: compatible additions only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
