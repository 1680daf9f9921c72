#!/usr/bin/env python3
"""Slow clients for test/bad/run.sh: each connects to the webhook, sends a
few bytes one per second, then stalls, and reports when the server closed
the connection.

  slow.py HOST PORT CAFILE READYFILE CLIENT...

CLIENT is NAME:MODE:PATH:FILE (FILE may be "-"). Modes:
  slow-tcp      TCP connection, nothing sent (no TLS handshake)
  slow-tls      the first BYTES bytes of a TLS ClientHello, then nothing
  slow-headers  TLS, then the first BYTES bytes of "POST PATH HTTP/1.1..."
  slow-body     TLS, complete headers (Content-Length: the file's size),
                then the first BYTES bytes of the body
All clients run at once, one thread each. Once every one has connected
(and, for slow-headers and slow-body, finished its handshake), READYFILE
is created. Then one line per client on stdout, tab-separated:
  NAME  ok|FAIL  DETAIL
ok: the server closed the connection between 0 and LIMIT seconds after
the client's last byte without a 2xx answer (environment SLOW_BYTES,
default 5; SLOW_LIMIT, default 15 s: the server's 10 s connection timeout
plus slack); FAIL otherwise (kept open longer, answered 2xx, or could not
connect). The exit status is 0 when every client is ok.
"""
import os
import socket
import ssl
import sys
import threading
import time

BYTES = int(os.environ.get("SLOW_BYTES", "5"))
LIMIT = float(os.environ.get("SLOW_LIMIT", "15"))
GIVE_UP = LIMIT + BYTES + 15  # stop waiting for the close after this


def client_hello(host):
    """The bytes of a real TLS ClientHello, made without a socket."""
    ctx = ssl.create_default_context()
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname=host)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


class Client:
    def __init__(self, spec, host, port, cafile):
        self.name, self.mode, self.path, self.file = spec.split(":", 3)
        self.host, self.port, self.cafile = host, port, cafile
        self.connected = threading.Event()
        self.result = ("FAIL", "did not run")

    def payload(self):
        if self.mode == "slow-tls":
            return client_hello(self.host)
        body = b""
        if self.file != "-":
            with open(self.file, "rb") as f:
                body = f.read()
        head = ("POST %s HTTP/1.1\r\nHost: %s:%d\r\n"
                "Content-Type: application/json\r\n"
                "Content-Length: %d\r\n\r\n" % (self.path, self.host,
                                                 self.port, len(body)))
        if self.mode == "slow-headers":
            return head.encode()
        if self.mode == "slow-body":
            return head.encode(), body
        raise ValueError("unknown mode " + self.mode)

    def run(self):
        try:
            self.result = self._run()
        except Exception as e:  # reported, never raised
            self.result = ("FAIL", "%s: %s" % (type(e).__name__, e))
        finally:
            self.connected.set()

    def _run(self):
        raw = socket.create_connection((self.host, self.port), timeout=10)
        sock = raw
        prefix, slow = b"", b""
        if self.mode in ("slow-headers", "slow-body"):
            ctx = ssl.create_default_context(cafile=self.cafile)
            sock = ctx.wrap_socket(raw, server_hostname=self.host)
            p = self.payload()
            if self.mode == "slow-body":
                prefix, slow = p[0], p[1][:BYTES]
            else:
                slow = p[:BYTES]
        elif self.mode == "slow-tls":
            slow = self.payload()[:BYTES]
        elif self.mode != "slow-tcp":
            raise ValueError("unknown mode " + self.mode)
        if prefix:
            sock.sendall(prefix)
        self.connected.set()
        last = time.monotonic()
        sent = 0
        try:
            for b in slow:
                sock.sendall(bytes([b]))
                sent += 1
                last = time.monotonic()
                time.sleep(1)
        except OSError as e:
            return self.closed(last, sent, b"", "while sending: %s" % e)
        # Stall: wait for the server to answer or close.
        sock.settimeout(1)
        got = b""
        while time.monotonic() - last < GIVE_UP:
            try:
                chunk = sock.recv(4096)
            except socket.timeout:
                continue
            except ssl.SSLError as e:
                return self.closed(last, sent, got, "TLS: %s" % e.reason)
            except OSError as e:
                return self.closed(last, sent, got, str(e))
            if not chunk:
                return self.closed(last, sent, got, "EOF")
            got += chunk
        sock.close()
        return ("FAIL", "%d bytes sent, still open %.0f s after the last "
                "byte (limit %.0f s)" % (sent, GIVE_UP, LIMIT))

    def closed(self, last, sent, got, how):
        after = time.monotonic() - last
        if got.startswith(b"HTTP/"):
            status = got.split(b"\r\n", 1)[0].decode("latin-1")
            answer = "; answer: " + status
        elif got[:1] == b"\x15":
            status = ""
            answer = "; a TLS alert back"
        elif got:
            status = ""
            answer = "; %d bytes back, not HTTP (%s...)" % (len(got),
                                                          got[:8].hex())
        else:
            status, answer = "", "; no answer"
        detail = ("%d bytes sent; closed by the server %.1f s after the last "
                  "byte (%s)%s" % (sent, after, how, answer))
        if status.startswith("HTTP/1.1 2") or status.startswith("HTTP/1.0 2"):
            return ("FAIL", detail + " (a 2xx for an incomplete request)")
        if after > LIMIT:
            return ("FAIL", detail + " (limit %.0f s)" % LIMIT)
        return ("ok", detail)


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    host, port, cafile, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
        sys.argv[4]
    clients = [Client(s, host, port, cafile) for s in sys.argv[5:]]
    threads = [threading.Thread(target=c.run, daemon=True) for c in clients]
    for t in threads:
        t.start()
    for c in clients:
        c.connected.wait()
    with open(ready, "w") as f:
        f.write("%d\n" % len(clients))
    for t in threads:
        t.join()
    bad = 0
    for c in clients:
        print("%s\t%s\t%s" % (c.name, c.result[0], c.result[1]), flush=True)
        bad += c.result[0] != "ok"
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
