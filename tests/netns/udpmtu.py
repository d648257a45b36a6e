#!/usr/bin/env python3
"""UDP datagrams of a given size for the MTU and fragment tests (issue 33).

  udpmtu.py send HOST PORT SIZE df|nodf [COUNT]  send COUNT datagrams (1); with df the socket
      sets DF: prints the path MTU the kernel has learnt for HOST afterwards (IP_MTU), which
      an ICMP fragmentation-needed lowers.
  udpmtu.py recv PORT COUNT TIMEOUT                print the size of each datagram received
  udpmtu.py echo-server PORT [SIZE]                answer every datagram with itself, or with
      SIZE bytes (a large answer to a small request); runs until killed
  udpmtu.py ask HOST PORT SIZE [TIMEOUT]           send SIZE bytes without DF, print the size of
      the answer (or 'timeout') and whether it is the request echoed ('same')
  udpmtu.py noise HOST PORT SECONDS                 a fragment flood that never completes: for
      SECONDS, fragments after the first (offset 1,000, MF) of ever new datagrams; prints
      how many were sent
  udpmtu.py frags HOST PORT SIZE ORDER [ID]        send one datagram as IP fragments of 1,000
      bytes through a raw socket in ORDER: 'reverse', 'shuffle' or 'inorder'
  udpmtu.py syn-frags HOST PORT ORDER             a TCP SYN with 2,000 bytes of data as IP
      fragments of 1,000 bytes in ORDER ('reverse' or 'inorder'); prints 'synack' when its
      SYN+ACK comes back within 3 s, else 'none'
  udpmtu.py frag-server PORT SIZE ORDER [PIECE]    answer every datagram with SIZE bytes sent as
      raw fragments of PIECE bytes (1,000) in ORDER (a world host whose replies arrive out
      of order)
"""
import random
import socket
import struct
import sys
import time

IP_MTU_DISCOVER, IP_PMTUDISC_DONT, IP_PMTUDISC_DO, IP_MTU = 10, 0, 2, 14


def udp_sock(df=False):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO if df else IP_PMTUDISC_DONT)
    return s


def send(host, port, size, df, count=1):
    s = udp_sock(df == 'df')
    s.connect((host, port))
    for _ in range(count):
        try:
            s.send(b'x' * size)
        except OSError:
            pass  # EMSGSIZE once the kernel knows the path MTU
    time.sleep(0.5)
    try:
        s.send(b'x' * size)
    except OSError:
        pass
    print(s.getsockopt(socket.IPPROTO_IP, IP_MTU))


def recv(port, count, timeout):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(('0.0.0.0', port))
    s.settimeout(timeout)
    for _ in range(count):
        try:
            data = s.recv(65536)
        except socket.timeout:
            break
        print(len(data), flush=True)


def frag_server(port, size, order, piece=1000):
    """Answer every datagram with SIZE bytes sent as raw fragments of PIECE bytes in ORDER."""
    s = udp_sock()
    s.bind(('0.0.0.0', port))
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    while True:
        data, peer = s.recvfrom(65536)
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        probe.connect(peer)
        src = probe.getsockname()[0]
        probe.close()
        for p in build_frags(src, peer[0], port, peer[1], size, order,
                             random.randrange(1, 65536), piece):
            raw.sendto(p, (peer[0], 0))


def echo_server(port, size=0):
    s = udp_sock()
    s.bind(('0.0.0.0', port))
    while True:
        data, peer = s.recvfrom(65536)
        s.sendto(bytes((i * 7) & 0xff for i in range(size)) if size else data, peer)


def ask(host, port, size, timeout=5.0):
    s = udp_sock()
    s.settimeout(timeout)
    req = bytes((i * 13) & 0xff for i in range(size))
    s.sendto(req, (host, port))
    try:
        data = s.recv(65536)
    except socket.timeout:
        print('timeout')
        return
    print(len(data), 'same' if data == req else 'other')


def csum(b):
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    s = (s & 0xffff) + (s >> 16)
    s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def build_frags(src, host, sport, port, size, order, ident, piece=1000):
    """One UDP datagram of SIZE bytes as IP fragments of PIECE bytes, in ORDER."""
    payload = bytes((i * 13) & 0xff for i in range(size))
    saddr, daddr = socket.inet_aton(src), socket.inet_aton(host)
    ulen = 8 + size
    pseudo = saddr + daddr + struct.pack('!BBH', 0, 17, ulen)
    udp = struct.pack('!HHHH', sport, port, ulen, 0) + payload
    c = csum(pseudo + udp) or 0xffff
    udp = udp[:6] + struct.pack('!H', c) + udp[8:]
    pieces = []
    for off in range(0, len(udp), piece):
        part = udp[off:off + piece]
        mf = 0x2000 if off + piece < len(udp) else 0
        hdr = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(part), ident, mf | (off // 8), 64,
                          17, 0, saddr, daddr)
        hdr = hdr[:10] + struct.pack('!H', csum(hdr)) + hdr[12:]
        pieces.append(hdr + part)
    if order == 'reverse':
        pieces.reverse()
    elif order == 'shuffle':
        random.shuffle(pieces)
        if len(pieces) > 1 and pieces[0][6:8] == b'\x20\x00':
            pieces.append(pieces.pop(0))  # never the first fragment first
    return pieces


def frags(host, port, size, order, ident=0x4242):
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.connect((host, port))
    src = probe.getsockname()[0]
    sport = 40000 + random.randrange(20000)
    pieces = build_frags(src, host, sport, port, size, order, ident)
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    for p in pieces:
        raw.sendto(p, (host, 0))
    print(len(pieces))


def syn_frags(host, port, order, size=2000):
    """A TCP SYN carrying SIZE bytes of data as IP fragments of 1,000 bytes in ORDER; prints
    'synack' when the SYN+ACK to it comes back within 3 s, else 'none'."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.connect((host, port))
    src = probe.getsockname()[0]
    saddr, daddr = socket.inet_aton(src), socket.inet_aton(host)
    sport, seq = 40000 + random.randrange(20000), random.randrange(1 << 32)
    payload = bytes((i * 13) & 0xff for i in range(size))
    seg = struct.pack('!HHIIBBHHH', sport, port, seq, 0, 5 << 4, 0x02, 65535, 0, 0) + payload
    c = csum(saddr + daddr + struct.pack('!BBH', 0, 6, len(seg)) + seg)
    seg = seg[:16] + struct.pack('!H', c) + seg[18:]
    ident = random.randrange(1, 65536)
    pieces = []
    for off in range(0, len(seg), 1000):
        part = seg[off:off + 1000]
        mf = 0x2000 if off + 1000 < len(seg) else 0
        hdr = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(part), ident, mf | (off // 8), 64,
                          6, 0, saddr, daddr)
        pieces.append(hdr[:10] + struct.pack('!H', csum(hdr)) + hdr[12:] + part)
    if order == 'reverse':
        pieces.reverse()
    lis = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
    lis.settimeout(0.5)
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    for p in pieces:
        raw.sendto(p, (host, 0))
    end = time.time() + 3
    while time.time() < end:
        try:
            pkt = lis.recv(65536)
        except socket.timeout:
            continue
        ihl = (pkt[0] & 15) * 4
        sp, dp, _, ack, _, flags = struct.unpack('!HHIIBB', pkt[ihl:ihl + 14])
        if pkt[12:16] == daddr and sp == port and dp == sport and flags & 0x12 == 0x12 and \
                ack == (seq + 1) & 0xffffffff:
            print('synack')
            return
    print('none')


def noise(host, port, seconds):
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.connect((host, port))
    saddr, daddr = socket.inet_aton(probe.getsockname()[0]), socket.inet_aton(host)
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    part = b'n' * 1000
    end, n = time.time() + seconds, 0
    while time.time() < end:
        hdr = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(part), n & 0xffff,
                          0x2000 | 125, 64, 17, 0, saddr, daddr)
        raw.sendto(hdr + part, (host, 0))
        n += 1
        if n % 64 == 0:
            time.sleep(0.001)
    print(n)


if __name__ == '__main__':
    a = sys.argv
    if a[1] == 'send':
        send(a[2], int(a[3]), int(a[4]), a[5], int(a[6]) if len(a) > 6 else 1)
    elif a[1] == 'recv':
        recv(int(a[2]), int(a[3]), float(a[4]))
    elif a[1] == 'echo-server':
        echo_server(int(a[2]), int(a[3]) if len(a) > 3 else 0)
    elif a[1] == 'ask':
        ask(a[2], int(a[3]), int(a[4]), float(a[5]) if len(a) > 5 else 5.0)
    elif a[1] == 'frag-server':
        frag_server(int(a[2]), int(a[3]), a[4], int(a[5]) if len(a) > 5 else 1000)
    elif a[1] == 'noise':
        noise(a[2], int(a[3]), float(a[4]))
    elif a[1] == 'syn-frags':
        syn_frags(a[2], int(a[3]), a[4])
    else:
        frags(a[2], int(a[3]), int(a[4]), a[5], int(a[6]) if len(a) > 6 else 0x4242)
