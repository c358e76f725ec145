"""test_tls.py - goblind's TLS listener (tls-port) with Debian's
redis-cli --tls and redis-py over ssl, using a self-signed certificate
made here with the openssl command: replies, a 5 MB value and a deep
pipeline through the non-blocking SSL sessions, client certificates
(tls-auth-clients yes, optional, no), a plain-text client on the TLS port
and a missing certificate at startup. Exits 77 (skip) when goblind was
built without TLS or the openssl command is missing.

    /usr/bin/python3 test_tls.py GOBLIND [TEST...]
"""

import os
import shutil
import socket
import subprocess
import sys

import e2e


def make_cert(d):
    """A self-signed certificate for 127.0.0.1, also used as the CA and as
    the client certificate."""
    cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                    "-nodes", "-keyout", key, "-out", cert, "-days", "2",
                    "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=120)
    return cert, key


def tls_goblind(path, cert, key, *extra):
    port = e2e.free_port()
    gob = e2e.goblind(path, "--tls-port", port, "--tls-cert-file", cert,
                      "--tls-key-file", key, "--tls-ca-cert-file", cert,
                      *extra)
    gob.tls_port = port
    return gob


def cli(port, cert, key, *args, client_cert=True):
    argv = ["redis-cli", "--tls", "--cacert", cert, "-p", str(port)]
    if client_cert:
        argv += ["--cert", cert, "--key", key]
    p = subprocess.run(argv + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    return p.stdout.decode().strip()


def test_redis_cli_and_redis_py(path, cert, key):
    import redis
    gob = tls_goblind(path, cert, key)
    assert cli(gob.tls_port, cert, key, "PING") == "PONG"
    assert cli(gob.tls_port, cert, key, "SET", "k", "v") == "OK"
    assert cli(gob.tls_port, cert, key, "GET", "k") == "v"
    r = redis.Redis(host="127.0.0.1", port=gob.tls_port, ssl=True,
                    ssl_ca_certs=cert, ssl_certfile=cert, ssl_keyfile=key)
    big = os.urandom(5000000)
    assert r.set("big", big)
    assert r.get("big") == big
    p = r.pipeline(transaction=False)
    for i in range(5000):
        p.set("a%d" % i, i)
        p.get("a%d" % i)
    out = p.execute()
    assert out[1::2] == [b"%d" % i for i in range(5000)]
    # The plain port still speaks plain RESP.
    assert gob.client(tcp=True).call("GET", "k") == ("$", b"v")
    # A plain-text client on the TLS port gets no RESP reply.
    s = socket.create_connection(("127.0.0.1", gob.tls_port), timeout=10)
    s.sendall(b"PING\r\n")
    try:
        data = s.recv(100)
    except ConnectionResetError:
        data = b""
    assert b"PONG" not in data, data
    s.close()
    c = gob.client()
    assert c.call("PING") == ("+", b"PONG")
    assert c.call("CONFIG", "GET", "tls-port") == \
        ("*", [("$", b"tls-port"), ("$", b"%d" % gob.tls_port)])
    e2e.check_stopped_cleanly(gob)


def test_client_certificates(path, cert, key):
    gob = tls_goblind(path, cert, key)              # yes: required
    assert "PONG" not in cli(gob.tls_port, cert, key, "PING",
                             client_cert=False)
    e2e.check_stopped_cleanly(gob)
    for mode in ("optional", "no"):
        gob = tls_goblind(path, cert, key, "--tls-auth-clients", mode)
        assert cli(gob.tls_port, cert, key, "PING",
                   client_cert=False) == "PONG", mode
        assert cli(gob.tls_port, cert, key, "PING") == "PONG", mode
        e2e.check_stopped_cleanly(gob)


def test_bad_setup_fails_at_start(path, cert, key):
    d = e2e.tmpdir()
    for extra in (["--tls-cert-file", cert],
                  ["--tls-cert-file", cert, "--tls-key-file",
                   os.path.join(d, "missing.pem")],
                  ["--tls-cert-file", cert, "--tls-key-file", key,
                   "--tls-auth-clients", "maybe"]):
        p = subprocess.run([path, "--port", "0", "--unixsocket",
                            os.path.join(d, "s"), "--tls-port",
                            str(e2e.free_port())] + extra,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=60)
        # A bad tls-auth-clients is refused while the options are read,
        # with Redis's text; the others when TLS is set up.
        assert p.returncode != 0 and (b"TLS" in p.stdout or
                                      b"'tls-auth-clients" in p.stdout), (
            extra, p.stdout)


ALL = [test_redis_cli_and_redis_py, test_client_certificates,
       test_bad_setup_fails_at_start]

if __name__ == "__main__":
    if shutil.which("openssl") is None:
        print("SKIP: no openssl command to make a certificate")
        sys.exit(77)
    probe = subprocess.run([sys.argv[1], "--port", "0", "--tls-port", "1",
                            "--unixsocket", "/nonexistent/x"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=60)
    if b"built without TLS" in probe.stdout:
        print("SKIP: goblind was built without TLS (-Dtls=disabled or no "
              "OpenSSL)")
        sys.exit(77)
    cert, key = make_cert(e2e.tmpdir())
    chosen = [t for t in ALL if t.__name__ in sys.argv[2:]] or ALL
    e2e.run_tests(chosen, sys.argv[1], cert, key)
