#!/usr/bin/env python3
"""Count TCP frames on an interface whose source or destination port is one of PORTS,
for SECONDS. Prints the count. Usage: sniff.py IFACE SECONDS PORT..."""
import socket
import struct
import sys
import time

iface, seconds, ports = sys.argv[1], float(sys.argv[2]), {int(p) for p in sys.argv[3:]}
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(0x0003))
s.bind((iface, 0))
s.settimeout(0.2)
n, end = 0, time.time() + seconds
while time.time() < end:
    try:
        f = s.recv(65535)
    except socket.timeout:
        continue
    if len(f) < 38 or f[12:14] != b'\x08\x00' or f[23] != 6:
        continue
    ihl = (f[14] & 15) * 4
    sp, dp = struct.unpack('!HH', f[14 + ihl:18 + ihl])
    if sp in ports or dp in ports:
        n += 1
print(n)
