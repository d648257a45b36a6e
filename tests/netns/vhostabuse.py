#!/usr/bin/env python3
"""Bad vhost-user clients against a server socket of cubevs-fp.

usage: vhostabuse.py SOCKET

Four connections, one after the other: garbage with an impossible message size, a
negotiation cut off after SET_OWNER, a memory table with rings outside it, a memory table
claiming more regions than the protocol allows. Prints one line, each case and how it ended:
"closed" (the server closed the connection), "cut" (we cut it off mid-negotiation) or
"kept" (the server kept it open; the caller checks that no device ran on it).
"""
import os
import socket
import struct
import sys
import time

VERSION = 0x1
REPLY = 0x4
GET_FEATURES, SET_FEATURES, SET_OWNER, SET_MEM_TABLE = 1, 2, 3, 5
SET_VRING_NUM, SET_VRING_ADDR, SET_VRING_BASE, SET_VRING_KICK, SET_VRING_CALL = 8, 9, 10, 12, 13


def msg(req, payload=b"", flags=VERSION):
    return struct.pack("<III", req, flags, len(payload)) + payload


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    return s


def closed_by_server(s, limit=5.0):
    """True when the server closes the connection within limit seconds."""
    end = time.time() + limit
    while time.time() < end:
        try:
            if s.recv(4096) == b"":
                return True
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True
    return False


def get_features(s):
    s.sendall(msg(GET_FEATURES))
    hdr = s.recv(12)
    req, flags, size = struct.unpack("<III", hdr)
    return struct.unpack("<Q", s.recv(size))[0]


def garbage(path):
    s = connect(path)
    s.sendall(struct.pack("<III", 0xDEADBEEF, VERSION, 0x7FFFFFFF) + os.urandom(64))
    return closed_by_server(s)


def cut_off(path):
    s = connect(path)
    feats = get_features(s)
    s.sendall(msg(SET_FEATURES, struct.pack("<Q", feats & ~(1 << 30))))
    s.sendall(msg(SET_OWNER))
    s.sendall(struct.pack("<III", SET_MEM_TABLE, VERSION, 40)[:7])
    s.close()
    return "cut"


def mem_table(nregions, regions):
    body = struct.pack("<II", nregions, 0)
    for gpa, size, uaddr, off in regions:
        body += struct.pack("<QQQQ", gpa, size, uaddr, off)
    return msg(SET_MEM_TABLE, body)


def rings_outside(path):
    s = connect(path)
    feats = get_features(s)
    # No protocol features: the rings are translated when the kick fd arrives.
    s.sendall(msg(SET_FEATURES, struct.pack("<Q", feats & ~(1 << 30))))
    s.sendall(msg(SET_OWNER))
    fd = os.memfd_create("guest", 0)
    os.ftruncate(fd, 1 << 20)
    table = mem_table(1, [(0, 1 << 20, 0x7F0000000000, 0)])
    socket.send_fds(s, [table], [fd])
    os.close(fd)
    for q in (0, 1):
        s.sendall(msg(SET_VRING_NUM, struct.pack("<II", q, 256)))
        # desc, used, avail far beyond the one 1 MiB region.
        s.sendall(msg(SET_VRING_ADDR, struct.pack("<IIQQQQ", q, 0, 0x7F0040000000,
                                                   0x7F0040010000, 0x7F0040020000, 0)))
        s.sendall(msg(SET_VRING_BASE, struct.pack("<II", q, 0)))
        kick, call = os.eventfd(0), os.eventfd(0)
        socket.send_fds(s, [msg(SET_VRING_CALL, struct.pack("<Q", q))], [call])
        socket.send_fds(s, [msg(SET_VRING_KICK, struct.pack("<Q", q))], [kick])
        os.close(kick)
        os.close(call)
    return closed_by_server(s, 2.0) or "kept"


def too_many_regions(path):
    s = connect(path)
    get_features(s)
    s.sendall(msg(SET_OWNER))
    s.sendall(mem_table(9999, [(0, 4096, 0, 0)] * 8))
    return closed_by_server(s)


def main():
    path = sys.argv[1]
    out = []
    for case in (garbage, cut_off, rings_outside, too_many_regions):
        try:
            r = case(path)
        except (BrokenPipeError, ConnectionResetError):
            r = True
        r = "closed" if r is True else "open" if r is False else r
        out.append("%s=%s" % (case.__name__, r))
        time.sleep(0.3)
    print(" ".join(out))


if __name__ == "__main__":
    main()
