#!/usr/bin/env python3
"""Clients for the namespace tests (run inside the client or a sandbox namespace).

parallel HOST PORT N          open N connections at once, then GET /name on each
serial HOST PORT N            N connections one after another, GET /peer; prints the ports seen
udp HOST PORT                 send one datagram, print the echo (or the error)
echo HOST PORT BYTES          raw TCP: send BYTES random bytes, check they come back
keepalive HOST PORT N GATE    N kept-alive connections: a request on each, wait for GATE to
                              exist, a request on each again; prints phase counts
slow HOST PORT SECONDS        read /slow; print the lines received and how the read ended
reuse HOST PORT LPORT         two connections from local port LPORT, one after the other, each
                              closed by the server first; prints the two peers the server saw
"""
import os
import time
import socket
import sys
import threading


def get_to_close(s, path):
    """GET path with Connection: close; everything the server sends until it closes."""
    s.sendall(('GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' % path).encode())
    data = b''
    while True:
        chunk = s.recv(4096)
        if not chunk:
            return data
        data += chunk


def parallel(host, port, n):
    socks, errors = [], []
    # Open them all first, so N connections are really established at the same time.
    for _ in range(n):
        try:
            s = socket.create_connection((host, port), timeout=10)
            socks.append(s)
        except OSError as e:
            errors.append(str(e))
    ok = [0]
    lock = threading.Lock()

    def one(s):
        try:
            data = get_to_close(s, '/name')
            if b' 200 ' in data.split(b'\r\n', 1)[0] and b'sandbox' in data:
                with lock:
                    ok[0] += 1
        except OSError as e:
            errors.append(str(e))
        finally:
            s.close()

    threads = [threading.Thread(target=one, args=(s,)) for s in socks]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    print('ok=%d failed=%d' % (ok[0], n - ok[0]))
    if errors:
        print('first error: %s' % errors[0])
    return 0 if ok[0] == n else 1


def http_get(s, path):
    s.sendall(('GET %s HTTP/1.1\r\nHost: x\r\n\r\n' % path).encode())
    data = b''
    while b'\r\n\r\n' not in data:
        chunk = s.recv(4096)
        if not chunk:
            raise OSError('closed')
        data += chunk
    head, body = data.split(b'\r\n\r\n', 1)
    n = int([l for l in head.split(b'\r\n') if l.lower().startswith(b'content-length')][0]
            .split(b':')[1])
    while len(body) < n:
        chunk = s.recv(4096)
        if not chunk:
            raise OSError('closed')
        body += chunk
    return head.split(b' ')[1], body


def serial(host, port, n):
    ports = []
    for _ in range(n):
        with socket.create_connection((host, port), timeout=10) as s:
            status, body = http_get(s, '/peer')
            ports.append(body.split()[1].decode())
    print(' '.join(ports))
    return 0


def udp(host, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    s.connect((host, port))
    try:
        s.send(b'hello')
        print(s.recv(4096).decode())
        return 0
    except ConnectionRefusedError:
        print('refused')
    except socket.timeout:
        print('timeout')
    return 1


def echo(host, port, nbytes):
    data = os.urandom(nbytes)
    with socket.create_connection((host, port), timeout=10) as s:
        got = b''
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    print('echo %s %d bytes' % ('ok' if got == data else 'BAD', len(got)))
    return 0 if got == data else 1


def keepalive(host, port, n, gate):
    socks, ok1, ok2 = [], 0, 0
    for _ in range(n):
        try:
            s = socket.create_connection((host, port), timeout=5)
            http_get(s, '/name')
            socks.append(s)
            ok1 += 1
        except OSError:
            pass
    print('phase1 ok=%d' % ok1, flush=True)
    deadline = time.time() + 60
    while not os.path.exists(gate) and time.time() < deadline:
        time.sleep(0.05)
    for s in socks:
        try:
            http_get(s, '/name')
            ok2 += 1
        except OSError:
            pass
    print('phase2 ok=%d' % ok2, flush=True)
    return 0


def slow(host, port, seconds):
    lines, how = 0, 'eof'
    start = time.time()
    try:
        with socket.create_connection((host, port), timeout=2) as s:
            s.sendall(b'GET /slow?n=600 HTTP/1.1\r\nHost: x\r\n\r\n')
            while time.time() - start < seconds:
                chunk = s.recv(4096)
                if not chunk:
                    break
                lines += chunk.count(b'\n')
                print('lines=%d' % lines, flush=True)
    except socket.timeout:
        how = 'stalled'
    except OSError as e:
        how = 'error %s' % e
    print('end=%s lines=%d' % (how, lines), flush=True)
    return 0


def reuse(host, port, lport):
    seen = []
    for _ in range(2):
        deadline = time.time() + 10
        while True:
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(('0.0.0.0', lport))
                s.settimeout(5)
                s.connect((host, port))
                break
            except OSError:
                s.close()
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        # Read to the end: the server closes first, so this side never sits in TIME_WAIT.
        data = get_to_close(s, '/peer')
        s.close()
        seen.append(data.split(b'\r\n\r\n', 1)[1].decode().strip())
    print(' / '.join(seen))
    return 0


if __name__ == '__main__':
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == 'parallel':
        sys.exit(parallel(args[0], int(args[1]), int(args[2])))
    if cmd == 'serial':
        sys.exit(serial(args[0], int(args[1]), int(args[2])))
    if cmd == 'udp':
        sys.exit(udp(args[0], int(args[1])))
    if cmd == 'echo':
        sys.exit(echo(args[0], int(args[1]), int(args[2])))
    if cmd == 'keepalive':
        sys.exit(keepalive(args[0], int(args[1]), int(args[2]), args[3]))
    if cmd == 'reuse':
        sys.exit(reuse(args[0], int(args[1]), int(args[2])))
    if cmd == 'slow':
        sys.exit(slow(args[0], int(args[1]), float(args[2])))
    sys.exit('unknown command')
