#!/usr/bin/env python3
"""Hostile and victim loads for the per-sandbox limit tests (issue 15). Every load is bounded.

hog.py udp-ports HOST PORT N        N flows to one endpoint, from local ports 20000.. (one
                                    datagram each, no wait): a SNAT-port hog; prints sent=N
hog.py udp-flood HOST BASE N        N new flows from one socket to ports BASE.. of HOST
hog.py syn-burst HOST PORT N SEC    N non-blocking connects at once, kept SEC seconds, closed;
                                    prints how many connected
hog.py syn-spread HOST BASE N SEC   the same to ports BASE.. (one endpoint each)
hog.py resolve HOST PORT N          N queries, each from a fresh socket, 2 s to answer;
                                    prints ok=K failed=F
hog.py short-conns HOST PORT N SEC  an honest server's load: up to N connections one after
                                    another, each a request and its answer, then closed; at
                                    most SEC seconds; prints ok=K failed=F slow=S (S took
                                    over 0.9 s: a SYN retransmitted, as after a refusal)
hog.py short-conns-cf HOST PORT N SEC  the same, the client closing first (a kept-alive
                                    request, then close): the TIME_WAIT is the client's
"""
import errno
import resource
import select
import socket
import sys
import time

from client import get_to_close, http_get


def udp_ports(host, port, n):
    sent = 0
    for i in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.bind(('0.0.0.0', 20000 + i))
            s.sendto(b'hog %d' % i, (host, port))
            sent += 1
        except OSError:
            pass
        finally:
            s.close()
        # Paced a little: a sandbox socket's ring on veth holds a few hundred frames.
        if i % 64 == 63:
            time.sleep(0.02)
    print('sent=%d' % sent)


def udp_flood(host, base, n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sent = 0
    for i in range(n):
        try:
            s.sendto(b'flood', (host, base + i))
            sent += 1
        except OSError:
            pass    # an ICMP error of an earlier datagram shows on a later send
        # Paced as udp-ports: unpaced, a loaded machine lost a third of them in the ring
        # before the worker saw them, and the refusals to count with them.
        if i % 64 == 63:
            time.sleep(0.02)
    s.close()
    print('sent=%d' % sent)


def syn_burst(host, port, n, sec, spread=False):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, n + 64)), hard))
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        e = s.connect_ex((host, port + len(socks) if spread else port))
        if e in (0, errno.EINPROGRESS):
            socks.append(s)
        else:
            s.close()
    deadline = time.time() + sec
    connected = set()
    while time.time() < deadline and len(connected) < len(socks):
        _, w, _ = select.select([], [s for s in socks if s not in connected], [], 0.2)
        for s in w:
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                connected.add(s)
    time.sleep(max(0, deadline - time.time()))
    for s in socks:
        s.close()
    print('connected=%d' % len(connected))


def resolve(host, port, n):
    ok = 0
    for i in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(2)
        try:
            q = b'query %d' % i
            s.sendto(q, (host, port))
            data, _ = s.recvfrom(2048)
            ok += data.startswith(q)
        except OSError:
            pass
        finally:
            s.close()
    print('ok=%d failed=%d' % (ok, n - ok))


def short_conns(host, port, n, sec, client_first=False):
    ok = failed = slow = 0
    deadline = time.time() + sec
    for _ in range(n):
        if time.time() > deadline:
            break
        t0 = time.time()
        try:
            with socket.create_connection((host, port), timeout=5) as s:
                if client_first:
                    good = http_get(s, '/peer')[0] == b'200'
                else:
                    good = b' 200 ' in get_to_close(s, '/peer').split(b'\r\n', 1)[0]
            if good:
                ok += 1
            else:
                failed += 1
        except OSError:
            failed += 1
        slow += time.time() - t0 > 0.9
    print('ok=%d failed=%d slow=%d' % (ok, failed, slow))


def main():
    a = sys.argv[1:]
    if a[0] == 'udp-ports':
        udp_ports(a[1], int(a[2]), int(a[3]))
    elif a[0] == 'udp-flood':
        udp_flood(a[1], int(a[2]), int(a[3]))
    elif a[0] == 'syn-burst':
        syn_burst(a[1], int(a[2]), int(a[3]), float(a[4]))
    elif a[0] == 'syn-spread':
        syn_burst(a[1], int(a[2]), int(a[3]), float(a[4]), True)
    elif a[0] == 'short-conns':
        short_conns(a[1], int(a[2]), int(a[3]), float(a[4]))
    elif a[0] == 'short-conns-cf':
        short_conns(a[1], int(a[2]), int(a[3]), float(a[4]), True)
    elif a[0] == 'resolve':
        resolve(a[1], int(a[2]), int(a[3]))
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
