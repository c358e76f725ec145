#!/usr/bin/env python3
"""check_symbols.py - libgoblin's symbol hygiene.

1. Every global symbol defined in libgoblin.a carries the goblin_ prefix
   (public goblin_NAME, internal goblin__NAME), so the static library can be
   linked into any program without clashing with its names.
2. The shared library exports exactly the symbols lib/libgoblin.map lists,
   and the map lists exactly the functions and objects declared GOBLIN_API
   (default visibility in the static library's objects).

Usage: check_symbols.py LIBGOBLIN.a LIBGOBLIN.so MAP
       check_symbols.py --print-map LIBGOBLIN.a   (the map's global list
       for the current sources, to paste at a release)
"""
import re
import subprocess
import sys

DEFINED = set("TDRBCGSV")


def static_globals(archive):
    out = subprocess.run(["nm", "-g", "--defined-only", archive],
                         capture_output=True, text=True, check=True).stdout
    return {f[2] for f in (l.split() for l in out.splitlines())
            if len(f) == 3 and f[1] in DEFINED}


def default_visibility(archive):
    """Names that the objects define GLOBAL with DEFAULT visibility."""
    out = subprocess.run(["readelf", "-sW", archive], capture_output=True,
                         text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(f) == 8 and f[4] == "GLOBAL" and f[5] == "DEFAULT" \
                and f[6] != "UND" and f[3] in ("FUNC", "OBJECT"):
            names.add(f[7])
    return names


def shared_exports(so):
    out = subprocess.run(["nm", "-D", "--defined-only", so],
                         capture_output=True, text=True, check=True).stdout
    return {f[2].split("@")[0] for f in (l.split() for l in out.splitlines())
            if len(f) == 3 and f[1] in DEFINED}


def map_globals(path):
    text = re.sub(r"/\*.*?\*/", "", open(path).read(), flags=re.S)
    names = set()
    for block in re.findall(r"global:(.*?)(?:local:|\})", text, re.S):
        names |= {n.strip() for n in block.split(";") if n.strip()}
    return names


def main():
    if sys.argv[1] == "--print-map":
        for n in sorted(default_visibility(sys.argv[2])):
            print("    %s;" % n)
        return 0
    archive, so, mapfile = sys.argv[1:4]
    ok = True
    # A sanitizer build adds its own markers (__odr_asan.NAME).
    bad = sorted(n for n in static_globals(archive)
                 if not n.startswith(("goblin_", "__odr_asan", "__asan_")))
    if bad:
        ok = False
        print("FAIL %d global symbols without the goblin_ prefix:" % len(bad))
        for n in bad:
            print("  " + n)
    api, listed, exported = (default_visibility(archive), map_globals(mapfile),
                             shared_exports(so))
    for n in sorted(api - listed):
        ok = False
        print("FAIL %s is GOBLIN_API but not in %s" % (n, mapfile))
    for n in sorted(listed - api):
        ok = False
        print("FAIL %s is in %s but no longer GOBLIN_API" % (n, mapfile))
    for n in sorted(exported ^ listed):
        ok = False
        print("FAIL the shared library %s %s" % (
            "exports" if n in exported else "does not export", n))
    print("%d exported symbols: %s" % (len(exported), "ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
