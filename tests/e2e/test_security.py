"""test_security.py - goblind's access control and safe defaults, end to
end: protected mode (a client from a non-loopback address gets Redis's
DENIED text), ACL users over TCP, SBE and the ring with the exact texts
redis-server gives, the aclfile option with ACL LOAD and ACL SAVE, and
owner-only modes for the Unix socket, ring files and saved ACL files.

    /usr/bin/python3 test_security.py GOBLIND GOBLIN_CLI [TEST...]
"""

import os
import socket
import stat
import subprocess
import sys

import e2e

DENIED = (b"-DENIED Redis is running in protected mode because protected "
          b"mode is enabled and no password is set for the default user.")


def local_address():
    """A non-loopback IPv4 address of this machine, or None."""
    try:
        out = subprocess.run(["ip", "-o", "-4", "addr", "show", "scope",
                              "global"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in out.decode().splitlines():
        words = line.split()
        if "inet" in words:
            return words[words.index("inet") + 1].split("/")[0]
    return None


def from_address(addr, port):
    """Connects to addr:port from addr itself (not loopback)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(10)
    s.bind((addr, 0))
    s.connect((addr, port))
    c = e2e.Client.__new__(e2e.Client)
    c.s, c.buf, c.pos = s, bytearray(), 0
    c.scratch = bytearray(1 << 16)
    c.scratch_view = memoryview(c.scratch)
    return c


def test_protected_mode(path, cli):
    addr = local_address()
    if addr is None:
        print("    SKIP: no non-loopback IPv4 address on this machine to "
              "connect from")
        return
    gob = e2e.goblind(path, "--bind", addr, "127.0.0.1")
    out = from_address(addr, gob.port).read_until_closed()
    assert out.startswith(DENIED) and out.endswith(b"from the outside.\r\n"), \
        out
    local = gob.client(tcp=True)
    assert local.call("PING") == ("+", b"PONG")
    assert gob.client().call("PING") == ("+", b"PONG")   # Unix socket
    assert local.call("CONFIG", "GET", "protected-mode") == \
        ("*", [("$", b"protected-mode"), ("$", b"yes")])
    # A password for the default user lets the client in (to AUTH).
    assert local.call("CONFIG", "SET", "requirepass", "pw") == ("+", b"OK")
    c = from_address(addr, gob.port)
    assert c.call("PING") == ("-", b"NOAUTH Authentication required.")
    assert c.call("AUTH", "pw") == ("+", b"OK")
    assert local.call("AUTH", "pw") == ("+", b"OK")
    assert local.call("CONFIG", "SET", "requirepass", "") == ("+", b"OK")
    assert from_address(addr, gob.port).read_until_closed().startswith(
        DENIED)
    assert local.call("CONFIG", "SET", "protected-mode", "no") == \
        ("+", b"OK")
    assert from_address(addr, gob.port).call("PING") == ("+", b"PONG")
    e2e.check_stopped_cleanly(gob)
    gob = e2e.goblind(path, "--bind", addr, "127.0.0.1",
                      "--protected-mode", "no")
    assert from_address(addr, gob.port).call("PING") == ("+", b"PONG")
    e2e.check_stopped_cleanly(gob)


# The same commands on redis-server and goblind must give the same
# replies, error texts included.
SCRIPT = [
    ["ACL", "SETUSER", "alice", "on", ">pw", "~cache:*", "%R~ro:*",
     "+@read", "+set", "+client|setname"],
    ["ACL", "SETUSER", "bob", "on", "nopass", "+@all", "-@dangerous",
     "~*"],
    ["ACL", "SETUSER", "x", "#abc"],
    ["ACL", "SETUSER", "x", "+nosuch"],
    ["ACL", "SETUSER", "x", "badrule"],
    ["ACL", "SETUSER", "x", "<nothere"],
    ["ACL", "DELUSER", "default"],
    ["ACL", "GETUSER", "nobody"],
    ["ACL", "DRYRUN", "alice", "get", "cache:1"],
    ["ACL", "DRYRUN", "alice", "set", "ro:1", "v"],
    ["ACL", "DRYRUN", "alice", "flushall"],
    ["ACL", "DRYRUN", "alice", "config", "get", "x"],
    ["ACL", "DRYRUN", "nobody", "get", "x"],
    ["ACL", "DRYRUN", "alice", "nocmd"],
    ["ACL", "CAT", "nosuch"],
    ["ACL", "WHOAMI"],
    ["ACL", "USERS"],
    ["ACL", "LOAD"],
    ["ACL", "SAVE"],
    ["SET", "ro:1", "x"],
    ["AUTH", "alice", "wrong"],
    ["AUTH", "nobody", "pw"],
    ["AUTH", "pw"],
    ["AUTH", "alice", "pw"],
    ["ACL", "WHOAMI"],
    ["GET", "cache:1"],
    ["GET", "ro:1"],
    ["SET", "ro:1", "y"],
    ["SET", "cache:1", "y"],
    ["MSET", "cache:2", "1", "z", "2"],
    ["GET", "other"],
    ["DEL", "cache:1"],
    ["CONFIG", "GET", "hz"],
    ["CLIENT", "SETNAME", "app"],
    ["CLIENT", "ID"],
    ["MULTI"],
    ["GET", "cache:1"],
    ["FLUSHALL"],
    ["EXEC"],
    ["AUTH", "bob", "any"],
    ["FLUSHALL"],
    ["KEYS", "*"],
    ["GET", "cache:1"],
]


def test_acl_texts_match_redis(path, cli):
    redis = e2e.redis_server()
    gob = e2e.goblind(path)
    f = e2e.Failures()
    r, g = redis.client(), gob.client()
    for cmd in SCRIPT:
        f.eq(g.call(*cmd), r.call(*cmd), "%s" % cmd)
    f.eq(g.call("ACL", "USERS"), r.call("ACL", "USERS"), "users")
    # Rules changed while a transaction was queued: EXEC checks again.
    ra, ga = redis.client(), gob.client()
    for c in (ra, ga):
        c.call("AUTH", "bob", "x")
        c.call("MULTI")
        c.call("SET", "k", "v")
        c.call("GET", "k")
    for c in (redis.client(), gob.client()):
        f.eq(c.call("ACL", "SETUSER", "bob", "-set"), ("+", b"OK"),
             "SETUSER as default")
    want = ra.call("EXEC")
    f.check(want[1][0][1].startswith(b"NOPERM ACLs rules changed"), want)
    f.eq(ga.call("EXEC"), want, "EXEC after rules changed")
    # A new connection is "default" until it authenticates.
    f.eq(gob.client().call("ACL", "WHOAMI"), ("$", b"default"), "whoami")
    e2e.check_stopped_cleanly(gob)
    redis.kill_now()
    f.finish()


def test_redis_py_users(path, cli):
    import redis
    gob = e2e.goblind(path, "--requirepass", "adminpw")
    admin = redis.Redis(unix_socket_path=gob.sock, password="adminpw")
    admin.acl_setuser("reader", enabled=True, passwords=["+rpw"],
                      keys=["pub:*"],
                      commands=["+@read", "+@connection", "+acl|whoami"])
    admin.set("pub:1", "hello")
    admin.set("secret", "x")
    reader = redis.Redis(unix_socket_path=gob.sock, username="reader",
                         password="rpw")
    assert reader.get("pub:1") == b"hello"
    assert reader.acl_whoami() == "reader"
    for call in (lambda: reader.get("secret"),
                 lambda: reader.set("pub:1", "y")):
        try:
            call()
            raise AssertionError("not refused")
        except redis.exceptions.NoPermissionError as e:
            assert "no permissions" in str(e), e
    try:
        redis.Redis(unix_socket_path=gob.sock, username="reader",
                    password="bad").ping()
        raise AssertionError("bad password accepted")
    except (redis.exceptions.AuthenticationError,
            redis.exceptions.ResponseError) as e:
        assert "WRONGPASS" in str(e) or "invalid username" in str(e), e
    info = admin.acl_getuser("reader")
    assert "on" in info["flags"], info
    assert admin.acl_deluser("reader") == 1
    e2e.check_stopped_cleanly(gob)


def cli_run(cli, *args):
    p = subprocess.run([cli] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    return p.stdout.decode().strip()


def test_ring_and_sbe_follow_the_rules(path, cli):
    d = e2e.tmpdir()
    ring = os.path.join(d, "r.ring")
    gob = e2e.goblind(path, "--ring", ring, "64k", "--requirepass", "pw")
    c = gob.client()
    assert c.call("AUTH", "pw") == ("+", b"OK")
    assert c.call("ACL", "SETUSER", "ro", "on", ">x", "~k*", "+@read",
                  "+@connection") == ("+", b"OK")
    assert c.call("SET", "k1", "v") == ("+", b"OK")
    for proto in ([], ["--sbe"]):
        for where in (["--ring", ring], ["-s", gob.sock]):
            args = where + proto
            out = cli_run(cli, *args, "get", "k1")
            assert "NOAUTH" in out, (args, out)
            out = cli_run(cli, *args, "--user", "ro", "-a", "x", "get", "k1")
            assert out.endswith("v"), (args, out)
            out = cli_run(cli, *args, "--user", "ro", "-a", "x", "set",
                          "k1", "w")
            assert "NOPERM this user has no permissions to run the 'set' " \
                   "command" in out, (args, out)
            out = cli_run(cli, *args, "--user", "ro", "-a", "bad", "get",
                          "k1")
            # goblin-cli reports a refused AUTH as it attaches.
            assert not out.endswith("v") and ("WRONGPASS" in out or
                                              "Could not" in out), \
                (args, out)
    e2e.check_stopped_cleanly(gob)


def test_aclfile(path, cli):
    d = e2e.tmpdir()
    acl = os.path.join(d, "users.acl")
    with open(acl, "w") as f:
        f.write("user default on nopass ~* &* +@all\n"
                "user bob on >bobpw ~bob:* +@all\n")
    gob = e2e.goblind(path, "--aclfile", acl)
    c = gob.client()
    assert c.call("ACL", "USERS") == ("*", [("$", b"bob"),
                                            ("$", b"default")])
    b = gob.client()
    assert b.call("AUTH", "bob", "bobpw") == ("+", b"OK")
    assert b.call("GET", "x")[1].startswith(b"NOPERM")
    assert c.call("ACL", "SETUSER", "carol", "on", ">c") == ("+", b"OK")
    assert c.call("ACL", "SAVE") == ("+", b"OK")
    assert stat.S_IMODE(os.stat(acl).st_mode) == 0o600
    with open(acl) as f:
        text = f.read()
    assert "user carol on #" in text, text
    with open(acl, "a") as f:
        f.write("user dave badrule\n")
    t, v = c.call("ACL", "LOAD")
    assert t == "-" and b":4: Syntax error." in v, v
    assert c.call("ACL", "DELUSER", "carol") == (":", 1)
    with open(acl, "w") as f:
        f.write(text)
    assert c.call("ACL", "LOAD") == ("+", b"OK")
    assert b"carol" in b"".join(x[1] for x in c.call("ACL", "USERS")[1])
    e2e.check_stopped_cleanly(gob)
    with open(acl, "w") as f:
        f.write("user eve on nonsense\n")
    p = subprocess.run([path, "--port", "0", "--unixsocket",
                        os.path.join(d, "s"), "--aclfile", acl],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    assert p.returncode != 0 and b":1: Syntax error." in p.stderr, p


def test_owner_only_files(path, cli):
    d = e2e.tmpdir()
    ring = os.path.join(d, "r.ring")
    gob = e2e.goblind(path, "--ring", ring, "64k")
    assert stat.S_IMODE(os.stat(gob.sock).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(ring).st_mode) == 0o600
    e2e.check_stopped_cleanly(gob)
    gob = e2e.goblind(path, "--ring", ring, "64k", "--ring-perm", "660",
                      "--unixsocketperm", "770")
    assert stat.S_IMODE(os.stat(gob.sock).st_mode) == 0o770
    assert stat.S_IMODE(os.stat(ring).st_mode) == 0o660
    e2e.check_stopped_cleanly(gob)


def rss_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def test_claimed_sizes_allocate_nothing(path, cli):
    """Counts and lengths a client claims (multibulk count, bulk length,
    an SBE frame length) commit no memory before the bytes arrive."""
    gob = e2e.goblind(path)
    hostile = []
    for i in range(20):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(gob.sock)
        if i % 2:
            s.sendall(b"*2147483647\r\n$536870000\r\n" + b"x" * 100)
        else:
            s.sendall(b"GOBLINS!" + (60 << 20).to_bytes(4, "little"))
        hostile.append(s)
    c = gob.client()
    assert c.call("PING") == ("+", b"PONG")
    assert c.call("CLIENT", "LIST")[0] == "$"   # every client is served
    # Twenty clients claiming 512 MiB each: the peak stays far below one.
    assert rss_kb(gob.pid(), "VmHWM") < 64 * 1024, rss_kb(gob.pid(),
                                                           "VmHWM")
    for s in hostile:
        s.close()
    e2e.check_stopped_cleanly(gob)


ALL = [test_protected_mode, test_claimed_sizes_allocate_nothing, test_acl_texts_match_redis, test_redis_py_users,
       test_ring_and_sbe_follow_the_rules, test_aclfile,
       test_owner_only_files]

if __name__ == "__main__":
    chosen = [t for t in ALL if t.__name__ in sys.argv[3:]] or ALL
    e2e.run_tests(chosen, sys.argv[1], sys.argv[2])
