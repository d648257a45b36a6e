#!/usr/bin/env python3
"""HTTP abuse of a JSON API on loopback (issue 7). Every load is bounded in count and time.

abuse.py requests HOST:PORT        hostile requests; prints one JSON line per request
abuse.py slow HOST:PORT N SECONDS  N clients trickle a request one byte at a time while a
                                   normal client must still be answered; prints JSON
abuse.py many HOST:PORT N PATH     N connections at once, each one GET; prints JSON counts
"""
import json
import resource
import select
import socket
import sys
import time


def addr(s):
    h, p = s.rsplit(':', 1)
    return h, int(p)


def http(target, raw, timeout=10):
    """Send raw bytes, read the whole answer; returns (status, body) or (None, error)."""
    try:
        with socket.create_connection(addr(target), timeout=timeout) as s:
            try:
                s.sendall(raw)
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass    # refused while sending: the answer may still be there to read
            data = b''
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError as e:
        return None, str(e)
    if not data.startswith(b'HTTP/1.'):
        return None, 'no HTTP answer (%d bytes)' % len(data)
    head, _, body = data.partition(b'\r\n\r\n')
    return int(head.split()[1]), body


def req(method, path, body=b'', extra=b''):
    return (b'%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n%sContent-Length: %d\r\n'
            b'Content-Type: application/json\r\n\r\n' % (method, path, extra, len(body))) + body


def requests(target):
    cases = [
        ('oversized body (2 MiB)', req(b'PUT', b'/sandboxes/big',
                                       b'{"iface":"' + b'a' * (2 << 20) + b'"}')),
        ('deep nesting (100k [)', req(b'PUT', b'/sandboxes/deep', b'[' * 100000)),
        ('deep nesting in an object', req(b'PUT', b'/sandboxes/deep',
                                          b'{"iface":' + b'{"a":' * 5000 + b'1' + b'}' * 5001)),
        ('invalid UTF-8 in the body', req(b'PUT', b'/sandboxes/u8', b'{"iface":"\xff\xfe"}')),
        ('invalid UTF-8 in the id', req(b'GET', b'/sandboxes/%FF%FE')),
        ('raw invalid UTF-8 in the path', req(b'GET', b'/sandboxes/\xc3\x28/exposed-ports/1')),
        ('.. as the id', req(b'GET', b'/sandboxes/../exposed-ports/8080')),
        ('%2e%2e as the id', req(b'DELETE', b'/sandboxes/%2e%2e')),
        ('%2F inside the id', req(b'DELETE', b'/sandboxes/s1%2Fx')),
        ('%2F splitting the route', req(b'GET', b'/sandboxes/s1%2Fexposed-ports%2F8080')),
        ('NUL in the path', req(b'DELETE', b'/sandboxes/s1%00x')),
        ('4 KiB id (GET)', req(b'GET', b'/sandboxes/' + b'A' * 4096)),
        ('4 KiB id (PUT)', req(b'PUT', b'/sandboxes/' + b'A' * 4096, b'{"iface":"sb1"}')),
        ('4 KiB id (DELETE)', req(b'DELETE', b'/sandboxes/' + b'A' * 4096)),
        ('64 KiB path', req(b'GET', b'/' + b'x/' * 32768)),
        ('id of 65 chars', req(b'PUT', b'/sandboxes/' + b'a' * 65, b'{"iface":"sb1"}')),
        ('port 99999999999', req(b'GET', b'/sandboxes/s1/exposed-ports/99999999999')),
        ('negative port', req(b'GET', b'/sandboxes/s1/exposed-ports/-8080')),
        ('port with trailing junk', req(b'GET', b'/sandboxes/s1/exposed-ports/8080x')),
        ('body on GET', req(b'GET', b'/sandboxes/s1', b'{"x":1}')),
        ('unknown method', req(b'BREW', b'/sandboxes/s1')),
        ('huge Content-Length, no body', req(b'PUT', b'/sandboxes/x', b'',
                                             b'Content-Length: 99999999999\r\n')),
        ('JSON array body', req(b'PUT', b'/sandboxes/arr', b'[1,2,3]')),
        ('duplicate keys', req(b'PUT', b'/sandboxes/dup',
                               b'{"iface":"sb1","iface":"sb2"}')),
        ('1000 exposed ports', req(b'PUT', b'/sandboxes/many',
                                   ('{"iface":"sb2","exposedPorts":[%s]}' % ','.join(
                                       str(i) for i in range(1, 1001))).encode())),
        ('policy with 10k CIDRs', req(b'PUT', b'/sandboxes/s1/policy',
                                      ('{"denyOut":[%s]}' % ','.join(
                                          '"10.0.%d.%d/32"' % (i // 256, i % 256)
                                          for i in range(10000))).encode())),
        ('policy with a bad CIDR', req(b'PUT', b'/sandboxes/s1/policy',
                                       b'{"denyOut":["10.0.0.0/33"]}')),
        ('NUL inside a JSON string', req(b'PUT', b'/sandboxes/nul',
                                         b'{"iface":"sb1\\u0000x"}')),
        # A TLS hello where a request line belongs, then CRLF CRLF: answered or closed at
        # once. (Without a line end, libmicrohttpd waits for one up to its 30 s timeout.)
        ('garbage request line', b'\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03' * 20 +
         b'\r\n\r\n'),
        ('header flood (200 headers)', req(b'GET', b'/healthz', b'',
                                           b''.join(b'X-H%d: %s\r\n' % (i, b'v' * 200)
                                                    for i in range(200)))),
    ]
    for name, raw in cases:
        t0 = time.time()
        status, body = http(target, raw)
        ok_json = None
        if status is not None and body:
            try:
                ok_json = 'error' in json.loads(body)
            except ValueError:
                ok_json = False
        print(json.dumps({'case': name, 'status': status,
                          'error_json': ok_json, 'secs': round(time.time() - t0, 2),
                          'detail': None if status is not None else body}), flush=True)


def slow(target, n, seconds):
    """n clients each send one byte of a request every 0.5 s; a normal client must get in."""
    raw = req(b'GET', b'/healthz')
    socks = []
    for _ in range(n):
        s = socket.create_connection(addr(target), timeout=5)
        socks.append([s, 0])
    deadline = time.time() + seconds
    normal = []
    while time.time() < deadline:
        for e in socks:
            if e[1] < len(raw) - 4:
                try:
                    e[0].send(raw[e[1]:e[1] + 1])
                    e[1] += 1
                except OSError:
                    pass
        t0 = time.time()
        status, _ = http(target, raw, timeout=5)
        normal.append((status, time.time() - t0))
        time.sleep(0.5)
    closed = 0
    for s, _ in socks:
        s.setblocking(False)
        try:
            if s.recv(1) == b'':
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        s.close()
    print(json.dumps({'normal': len(normal), 'normal_ok': sum(1 for st, _ in normal if st == 200),
                      'worst_secs': round(max(t for _, t in normal), 2), 'slow_closed': closed}))


def many(target, n, path):
    resource.setrlimit(resource.RLIMIT_NOFILE, (n + 256, n + 256))
    raw = b'GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' % path.encode()
    socks, res = {}, {'ok': 0, 'refused': 0, 'reset': 0, 'timeout': 0, 'other': 0,
                      'statuses': {}}
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(addr(target))
        except BlockingIOError:
            pass
        except OSError:
            res['refused'] += 1
            s.close()
            continue
        socks[s.fileno()] = [s, b'', False]
    ep = select.epoll()
    for fd in socks:
        ep.register(fd, select.EPOLLOUT)
    deadline = time.time() + 60
    while socks and time.time() < deadline:
        for fd, ev in ep.poll(1):
            s, buf, sent = socks[fd]
            try:
                if not sent and ev & select.EPOLLOUT:
                    s.send(raw)
                    socks[fd][2] = True
                    ep.modify(fd, select.EPOLLIN)
                    continue
                chunk = s.recv(65536)
            except ConnectionRefusedError:
                res['refused'] += 1
                chunk = None
            except ConnectionResetError:
                res['reset'] += 1
                chunk = None
            except OSError:
                res['other'] += 1
                chunk = None
            if chunk:
                socks[fd][1] += chunk
                continue
            if chunk == b'':
                data = socks[fd][1]
                if data.startswith(b'HTTP/1.'):
                    st = data.split()[1].decode()
                    res['statuses'][st] = res['statuses'].get(st, 0) + 1
                    res['ok'] += 1
                else:
                    res['reset'] += 1
            ep.unregister(fd)
            s.close()
            del socks[fd]
    res['timeout'] = len(socks)
    for s, _, _ in socks.values():
        s.close()
    print(json.dumps(res))


if __name__ == '__main__':
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == 'requests':
        requests(a[0])
    elif cmd == 'slow':
        slow(a[0], int(a[1]), float(a[2]))
    elif cmd == 'many':
        many(a[0], int(a[1]), a[2])
    else:
        sys.exit('unknown command ' + cmd)
