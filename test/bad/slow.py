#!/usr/bin/env python3
"""Slow and greedy clients for test/bad/run.sh.

  slow.py HOST PORT CAFILE READYFILE CLIENT...

Each CLIENT connects to the server, sends a few bytes one per second, then
stalls (or keeps trickling), and reports when the server closed the
connection. CLIENT is NAME:MODE:PATH:FILE (FILE may be "-"). Modes:
  slow-tcp         TCP connection, nothing sent (no TLS handshake)
  slow-tls         the first BYTES bytes of a TLS ClientHello, then nothing
  slow-headers     TLS, then the first BYTES bytes of "POST PATH HTTP/1.1..."
  slow-body        TLS, complete headers (Content-Length: the file's size),
                   then the first BYTES bytes of the body
  trickle-headers  TLS, then the headers one byte a second, never stopping
  trickle-body     TLS, complete headers, then the body one byte a second,
                   never stopping
All clients run at once, one thread each. Once every one has connected
(and, but for slow-tcp and slow-tls, finished its handshake), READYFILE
is created. Then one line per client on stdout, tab-separated:
  NAME  ok|FAIL  DETAIL
ok for slow-*: the server closed the connection between 0 and LIMIT
seconds after the client's last byte without a 2xx answer (environment
SLOW_BYTES, default 5; SLOW_LIMIT, default 15 s: the server's 10 s
connection timeout plus slack). ok for trickle-*: the server closed it,
without a 2xx answer, between DEADLINE - 1 and DEADLINE + 3 seconds after
the connection was made, while bytes were still arriving (SLOW_DEADLINE,
default 10 s: HTTPD_READ_S), so an idle timeout cannot be what closed it.
FAIL otherwise (kept open longer, answered 2xx, or could not connect).
The exit status is 0 when every client is ok.

  slow.py per-client HOST PORT CAFILE LIMIT

Opens LIMIT TCP connections from 127.0.0.1 and holds them (nothing sent),
then checks that: they all stay open for a second; one more from 127.0.0.1
is closed by the server at once, with nothing sent back; a GET /healthz
from 127.0.0.2 meanwhile is answered 200 (the server is not full: the
limit is per address); and once the LIMIT close, a GET /healthz from
127.0.0.1 is answered 200 again. Prints one line, "per-client  ok|FAIL
DETAIL"; exit status 0 when ok.

  slow.py early HOST PORT CAFILE PATH LENGTH [CERT KEY]

Sends over TLS (with the client certificate CERT and KEY, if given) the
headers of a POST to PATH with Content-Length: LENGTH, and no body byte;
then waits up to 3 s for an answer. Prints "STATUS SECONDS BODYLINE"
(STATUS 000: no answer, as from a server that waits for the body), and
exits 0 when there was an answer.

  slow.py budget HOST PORT CAFILE PATH LENGTH N

The budget of large bodies held at once: N TLS connections each send the
headers of a POST to PATH with Content-Length: LENGTH and half the body,
and hold; then one more such request must be answered 503 at once, a
small POST to PATH (a 1 KiB body) must still get an answer other than
503, and once the N close, the large request must be read again (no
answer within 3 s: the server waits for its body). Prints one line,
"budget  ok|FAIL  DETAIL"; exit status 0 when ok.
"""
import os
import socket
import ssl
import sys
import threading
import time

BYTES = int(os.environ.get("SLOW_BYTES", "5"))
LIMIT = float(os.environ.get("SLOW_LIMIT", "15"))
DEADLINE = float(os.environ.get("SLOW_DEADLINE", "10"))
GIVE_UP = LIMIT + BYTES + 15  # stop waiting for the close after this
TRICKLE_FOR = DEADLINE + 20    # a trickle gives up after this many seconds


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
        if self.mode in ("slow-headers", "trickle-headers"):
            return head.encode()
        if self.mode in ("slow-body", "trickle-body"):
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
        if self.mode.startswith("trickle-"):
            return self._trickle()
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

    def _trickle(self):
        """A byte a second until the server closes, for TRICKLE_FOR s."""
        start = time.monotonic()
        raw = socket.create_connection((self.host, self.port), timeout=10)
        ctx = ssl.create_default_context(cafile=self.cafile)
        sock = ctx.wrap_socket(raw, server_hostname=self.host)
        p = self.payload()
        if self.mode == "trickle-body":
            sock.sendall(p[0])
            data = p[1]
        else:
            data = p
        # Headers or a body that cannot be complete in time.
        if len(data) <= TRICKLE_FOR:
            raise ValueError("%d bytes are too few to trickle for %.0f s" %
                             (len(data), TRICKLE_FOR))
        self.connected.set()
        sock.settimeout(0.05)
        sent, last, got, how = 0, time.monotonic(), b"", ""
        while time.monotonic() - start < TRICKLE_FOR:
            try:
                sock.sendall(data[sent:sent + 1])
                sent += 1
                last = time.monotonic()
            except OSError as e:
                how = "while sending: %s" % e
                break
            wake = time.monotonic() + 1
            while time.monotonic() < wake and not how:
                try:
                    chunk = sock.recv(4096)
                except (socket.timeout, ssl.SSLWantReadError):
                    continue
                except ssl.SSLError as e:
                    how = "TLS: %s" % e.reason
                    break
                except OSError as e:
                    how = str(e)
                    break
                if not chunk:
                    how = "EOF"
                    break
                got += chunk
            if how:
                break
        else:
            sock.close()
            return ("FAIL", "%d bytes sent one a second; still open %.0f s "
                    "after connecting (deadline %.0f s)" % (sent,
                                                           TRICKLE_FOR,
                                                           DEADLINE))
        now = time.monotonic()
        after, gap = now - start, now - last
        status = ""
        if got.startswith(b"HTTP/"):
            status = got.split(b"\r\n", 1)[0].decode("latin-1")
        detail = ("%d bytes sent one a second; closed by the server %.1f s "
                  "after connecting, %.1f s after the last byte (%s)%s" %
                  (sent, after, gap, how,
                   "; answer: " + status if status else ""))
        if status.startswith("HTTP/1.1 2") or status.startswith("HTTP/1.0 2"):
            return ("FAIL", detail + " (a 2xx for an incomplete request)")
        if after < DEADLINE - 1 or after > DEADLINE + 3:
            return ("FAIL", detail + " (want %.0f-%.0f s)" % (DEADLINE - 1,
                                                             DEADLINE + 3))
        if gap > 3:
            return ("FAIL", detail + " (bytes had stopped: an idle timeout?)")
        return ("ok", detail)

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


def tls_get(host, port, cafile, source, path="/healthz", timeout=5):
    """GET path over TLS from the address source: the status, or 0."""
    raw = socket.create_connection((host, port), timeout=timeout,
                                   source_address=(source, 0))
    ctx = ssl.create_default_context(cafile=cafile)
    with ctx.wrap_socket(raw, server_hostname=host) as sock:
        sock.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\n"
                      "Connection: close\r\n\r\n" % (path, host,
                                                      port)).encode())
        got = b""
        while b"\r\n" not in got:
            chunk = sock.recv(4096)
            if not chunk:
                break
            got += chunk
    line = got.split(b"\r\n", 1)[0].split()
    return int(line[1]) if len(line) > 1 and line[1].isdigit() else 0


def closed_within(sock, seconds):
    """Did the server close sock within seconds?  (what, bytes back)"""
    sock.settimeout(seconds)
    try:
        chunk = sock.recv(4096)
    except socket.timeout:
        return None, b""
    except OSError as e:
        return str(e), b""
    return ("EOF" if not chunk else "data"), chunk


def per_client(host, port, cafile, limit):
    """The per-address connection limit; one result line."""
    held = []
    try:
        for _ in range(limit):
            held.append(socket.create_connection(
                (host, port), timeout=5, source_address=("127.0.0.1", 0)))
        time.sleep(1)
        for i, s in enumerate(held):
            how, _ = closed_within(s, 0.01)
            if how is not None:
                return ("FAIL", "connection %d of %d from 127.0.0.1 was "
                        "closed by the server (%s) under the limit" %
                        (i + 1, limit, how))
        t0 = time.monotonic()
        extra = socket.create_connection((host, port), timeout=5,
                                         source_address=("127.0.0.1", 0))
        how, back = closed_within(extra, 3)
        took = time.monotonic() - t0
        extra.close()
        if how is None:
            return ("FAIL", "connection %d from 127.0.0.1 is still open "
                    "after 3 s: no per-client limit of %d" % (limit + 1,
                                                              limit))
        if back:
            return ("FAIL", "connection %d from 127.0.0.1 got %d bytes "
                    "back, want none" % (limit + 1, len(back)))
        other = tls_get(host, port, cafile, "127.0.0.2")
        if other != 200:
            return ("FAIL", "GET /healthz from 127.0.0.2 got %d, want 200 "
                    "(the server is not full)" % other)
    finally:
        for s in held:
            s.close()
    again, t1 = 0, time.monotonic()
    while time.monotonic() - t1 < 5:
        try:
            again = tls_get(host, port, cafile, "127.0.0.1")
        except OSError:
            again = 0
        if again == 200:
            break
        time.sleep(0.2)
    if again != 200:
        return ("FAIL", "once the %d closed, GET /healthz from 127.0.0.1 "
                "still gets %d" % (limit, again))
    return ("ok", "%d connections from 127.0.0.1 held; number %d closed "
            "by the server in %.2f s (%s) with nothing sent back; GET "
            "/healthz from 127.0.0.2 meanwhile: 200; from 127.0.0.1 once "
            "the %d closed: 200" % (limit, limit + 1, took, how, limit))


def post_head(host, port, path, length):
    return ("POST %s HTTP/1.1\r\nHost: %s:%d\r\n"
            "Content-Type: application/json\r\n"
            "Content-Length: %d\r\n\r\n" % (path, host, port,
                                             length)).encode()


def early_answer(host, port, cafile, path, length, cert=None, key=None,
                 body=b""):
    """Headers with Content-Length and body (none by default): the
    answer, if any within 3 s, as (status, seconds, first body line)."""
    ctx = ssl.create_default_context(cafile=cafile)
    if cert:
        ctx.load_cert_chain(cert, key)
    raw = socket.create_connection((host, port), timeout=5)
    t0 = time.monotonic()
    got = b""
    with ctx.wrap_socket(raw, server_hostname=host) as sock:
        sock.sendall(post_head(host, port, path, length) + body)
        sock.settimeout(0.2)
        while time.monotonic() - t0 < 3 and b"\r\n\r\n" not in got:
            try:
                chunk = sock.recv(4096)
            except (socket.timeout, ssl.SSLWantReadError):
                continue
            except OSError:
                break
            if not chunk:
                break
            got += chunk
        # The body, if it was sent along.
        while time.monotonic() - t0 < 3:
            try:
                chunk = sock.recv(4096)
            except (socket.timeout, ssl.SSLWantReadError):
                break
            except OSError:
                break
            if not chunk:
                break
            got += chunk
    took = time.monotonic() - t0
    head, _, body = got.partition(b"\r\n\r\n")
    line = head.split(b"\r\n", 1)[0].split()
    status = line[1].decode() if len(line) > 1 else "000"
    first = body.split(b"\n", 1)[0].decode("utf-8", "replace")
    return status, took, first


def early(host, port, cafile, path, length, cert=None, key=None):
    """Headers with Content-Length and no body: the answer, if any."""
    status, took, first = early_answer(host, port, cafile, path, length,
                                       cert, key)
    print("%s %.2f %s" % (status, took, first), flush=True)
    return 0 if status != "000" else 1


def budget(host, port, cafile, path, length, n):
    """The large-body budget; one result line."""
    held = []
    ctx = ssl.create_default_context(cafile=cafile)
    try:
        for _ in range(n):
            raw = socket.create_connection((host, port), timeout=5)
            sock = ctx.wrap_socket(raw, server_hostname=host)
            sock.sendall(post_head(host, port, path, length) +
                         b" " * (length // 2))
            held.append(sock)
        for i, sock in enumerate(held):
            how, back = closed_within(sock, 0.01)
            if how is not None:
                return ("FAIL", "holder %d of %d was answered or closed "
                        "(%s): %r" % (i + 1, n, how, back[:80]))
        over = early_answer(host, port, cafile, path, length)
        if over[0] != "503":
            return ("FAIL", "request %d with Content-Length %d: HTTP %s in "
                    "%.2f s, want 503 at once: %s" % ((n + 1, length) +
                                                     over))
        small = early_answer(host, port, cafile, path, 1024,
                             body=b" " * 1024)
        if small[0] in ("503", "000"):
            return ("FAIL", "a 1 KiB POST while the budget is held: HTTP "
                    "%s, want an answer other than 503" % small[0])
    finally:
        for sock in held:
            sock.close()
    again = ("503", 0, "")
    t1 = time.monotonic()
    while time.monotonic() - t1 < 5 and again[0] == "503":
        again = early_answer(host, port, cafile, path, length)
    if again[0] != "000":
        return ("FAIL", "once the %d closed, Content-Length %d still gets "
                "HTTP %s: %s" % (n, length, again[0], again[2]))
    return ("ok", "%d requests of %d bytes held (half their bodies in); "
            "one more: HTTP 503 in %.2f s (%s); a 1 KiB POST meanwhile: "
            "HTTP %s; once the %d closed, the large request is read again"
            % (n, length, over[1], over[2], small[0], n))


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "per-client":
        if len(sys.argv) != 6:
            sys.exit(__doc__)
        res = per_client(sys.argv[2], int(sys.argv[3]), sys.argv[4],
                         int(sys.argv[5]))
        print("per-client\t%s\t%s" % res, flush=True)
        return 0 if res[0] == "ok" else 1
    if len(sys.argv) >= 2 and sys.argv[1] == "early":
        if len(sys.argv) not in (7, 9):
            sys.exit(__doc__)
        return early(sys.argv[2], int(sys.argv[3]), sys.argv[4],
                     sys.argv[5], int(sys.argv[6]), *sys.argv[7:9])
    if len(sys.argv) >= 2 and sys.argv[1] == "budget":
        if len(sys.argv) != 8:
            sys.exit(__doc__)
        res = budget(sys.argv[2], int(sys.argv[3]), sys.argv[4],
                     sys.argv[5], int(sys.argv[6]), int(sys.argv[7]))
        print("budget\t%s\t%s" % res, flush=True)
        return 0 if res[0] == "ok" else 1
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
