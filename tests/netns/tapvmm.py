#!/usr/bin/env python3
"""A VMM's side of a TAP with a vnet header (issue 33), for one frame: opens TAP NAME with
IFF_VNET_HDR, says 'open', waits for a line, writes one TCP segment of SIZE bytes from the guest
(169.254.68.6 -> 198.19.0.2:8000) with a partial checksum, as a TSO frame (gso_size 1448) when it
is larger than one MSS, says 'wrote N', and waits for a line before it closes the TAP.
"""
import fcntl
import os
import socket
import struct
import sys

TUNSETIFF = 0x400454ca
IFF_TAP, IFF_NO_PI, IFF_VNET_HDR = 0x0002, 0x1000, 0x4000
VIRTIO_NET_HDR_F_NEEDS_CSUM, VIRTIO_NET_HDR_GSO_TCPV4 = 1, 1


def csum(b):
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    s = (s & 0xffff) + (s >> 16)
    return (s & 0xffff) + (s >> 16)


def main(name, size):
    fd = os.open('/dev/net/tun', os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack('16sH', name.encode(),
                                           IFF_TAP | IFF_NO_PI | IFF_VNET_HDR))
    print('open', flush=True)
    sys.stdin.readline()
    src, dst = socket.inet_aton('169.254.68.6'), socket.inet_aton('198.19.0.2')
    tcp = struct.pack('!HHIIBBHHH', 40000, 8000, 1, 1, 5 << 4, 0x18, 65535, 0, 0) + b'z' * size
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(tcp), 1, 0x4000, 64, 6, 0, src, dst)
    ip = ip[:10] + struct.pack('!H', 0xffff - csum(ip)) + ip[12:]
    pseudo = csum(src + dst + struct.pack('!BBH', 0, 6, len(tcp)))
    tcp = tcp[:16] + struct.pack('!H', pseudo) + tcp[18:]
    frame = bytes.fromhex('20906fcfcfcf20906ffcfcfc0800') + ip + tcp
    gso = size > 1448
    hdr = struct.pack('<BBHHHH', VIRTIO_NET_HDR_F_NEEDS_CSUM,
                      VIRTIO_NET_HDR_GSO_TCPV4 if gso else 0, 54, 1448 if gso else 0, 34, 16)
    print('wrote', os.write(fd, hdr + frame), flush=True)
    sys.stdin.readline()


if __name__ == '__main__':
    main(sys.argv[1], int(sys.argv[2]))
