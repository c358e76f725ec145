#!/usr/bin/env python3
"""check_headers.py - every public header compiles on its own, as C11 and
as C++11, with warnings as errors, and goblin.h includes
every header under goblin/.

Usage: check_headers.py INCLUDE_DIR -- CC... -- CXX...
The compilers come from meson (their full command lines), so the check uses
the same toolchain as the build. Headers are found at run time: a new
header is checked without touching this script.
"""
import os
import subprocess
import sys
import tempfile


def compile_one(cmd, std, include_dir, header, suffix, workdir):
    src = os.path.join(workdir, "one" + suffix)
    with open(src, "w") as f:
        f.write('#include <%s>\n#include <%s>\n' % (header, header))
        f.write("int main(void) { return 0; }\n" if suffix == ".c"
                else "int main() { return 0; }\n")
    argv = cmd + ["-std=" + std, "-Wall", "-Wextra", "-Werror", "-pedantic",
                  "-I", include_dir, "-fsyntax-only", src]
    res = subprocess.run(argv, capture_output=True, text=True)
    if res.returncode != 0:
        print("FAIL %s as %s:\n%s" % (header, std, res.stderr))
        return False
    return True


def main():
    args = sys.argv[1:]
    include_dir = args[0]
    first = args.index("--")
    second = args.index("--", first + 1)
    cc, cxx = args[first + 1:second], args[second + 1:]
    names = sorted(n for n in os.listdir(os.path.join(include_dir, "goblin"))
                   if n.endswith(".h"))
    headers = ["goblin.h"] + ["goblin/" + n for n in names]
    ok = True
    with open(os.path.join(include_dir, "goblin.h")) as f:
        umbrella = f.read()
    # goblin/tls.h and goblin/lua.h belong to the companion libraries
    # libgoblin-tls and libgoblin-script, which libgoblin's users need not
    # have: the umbrella leaves them out.
    for n in names:
        if n not in ("tls.h", "lua.h") and '#include "goblin/%s"' % n not in umbrella:
            print("FAIL goblin.h does not include goblin/%s" % n)
            ok = False
    with tempfile.TemporaryDirectory() as work:
        for h in headers:
            ok &= compile_one(cc, "c11", include_dir, h, ".c", work)
            ok &= compile_one(cxx, "c++11", include_dir, h, ".cpp", work)
    print("%d headers, C11 and C++: %s" % (len(headers),
                                             "ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
