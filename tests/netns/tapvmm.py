#!/usr/bin/env python3
"""A VMM's side of a TAP with a vnet header (issue 33): opens TAP NAME with IFF_VNET_HDR, says
'open' and waits for a line. Then, for one frame, writes one TCP segment of SIZE bytes from the
guest (169.254.68.6 -> 198.19.0.2:8000) with a partial checksum, as a TSO frame (gso_size 1448)
when it is larger than one MSS, says 'wrote N', and waits for a line before it closes the TAP.
With 'nogso' the frame has no GSO type whatever its size. With 'tcp' it plays the guest's TCP instead: a handshake with the server at 198.19.0.2:8000,
then SIZE bytes in one TSO frame, and says 'acked N': how many of them the server acknowledged
(within 5 s). It answers ARP for the guest's address meanwhile.
"""
import fcntl
import os
import socket
import struct
import sys
import time

TUNSETIFF = 0x400454ca
IFF_TAP, IFF_NO_PI, IFF_VNET_HDR = 0x0002, 0x1000, 0x4000
VIRTIO_NET_HDR_F_NEEDS_CSUM, VIRTIO_NET_HDR_GSO_TCPV4 = 1, 1


def csum(b):
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    s = (s & 0xffff) + (s >> 16)
    return (s & 0xffff) + (s >> 16)


GUEST_MAC, GW_MAC = bytes.fromhex('20906ffcfcfc'), bytes.fromhex('20906fcfcfcf')
SRC, DST = socket.inet_aton('169.254.68.6'), socket.inet_aton('198.19.0.2')


def segment(seq, ack, flags, data, opts=b'', tso=True):
    """A frame with a vnet header: a TSO frame when data is longer than one MSS (and tso)."""
    tcp = struct.pack('!HHIIBBHHH', 40000, 8000, seq, ack, (5 + len(opts) // 4) << 4, flags,
                      65535, 0, 0) + opts + data
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(tcp), 1, 0x4000, 64, 6, 0, SRC, DST)
    ip = ip[:10] + struct.pack('!H', 0xffff - csum(ip)) + ip[12:]
    pseudo = csum(SRC + DST + struct.pack('!BBH', 0, 6, len(tcp)))
    tcp = tcp[:16] + struct.pack('!H', pseudo) + tcp[18:]
    gso = tso and len(data) > 1448
    hdr = struct.pack('<BBHHHH', VIRTIO_NET_HDR_F_NEEDS_CSUM,
                      VIRTIO_NET_HDR_GSO_TCPV4 if gso else 0, 34 + len(tcp) - len(data),
                      1448 if gso else 0, 34, 16)
    return hdr + GW_MAC + GUEST_MAC + b'\x08\x00' + ip + tcp


def frames(fd, until):
    """Frames read from the TAP (vnet header off) until the deadline; ARP answered."""
    while time.time() < until:
        try:
            f = os.read(fd, 70000)[10:]
        except BlockingIOError:
            time.sleep(0.01)
            continue
        if f[12:14] == b'\x08\x06' and f[38:42] == SRC:
            arp = struct.pack('!HHBBH', 1, 0x0800, 6, 4, 2) + GUEST_MAC + SRC + f[22:32]
            os.write(fd, bytes(10) + f[6:12] + GUEST_MAC + b'\x08\x06' + arp)
        elif f[12:14] == b'\x08\x00' and f[23] == 6:
            yield f[14 + (f[14] & 15) * 4:]


def tcp(fd, size):
    os.set_blocking(fd, False)
    deadline = time.time() + 5
    os.write(fd, segment(1000, 0, 0x02, b'', struct.pack('!BBH', 2, 4, 1460)))
    isn = None
    for t in frames(fd, deadline):
        if t[13] & 0x12 == 0x12:
            isn = struct.unpack('!I', t[4:8])[0]
            break
    if isn is None:
        return 0
    os.write(fd, segment(1001, isn + 1, 0x10, b''))
    os.write(fd, segment(1001, isn + 1, 0x18, bytes(i % 251 for i in range(size))))
    acked = 0
    for t in frames(fd, deadline):
        if t[13] & 0x10:
            acked = max(acked, (struct.unpack('!I', t[8:12])[0] - 1001) & 0xffffffff)
        if acked >= size:
            break
    return acked


def main(name, size, mode):
    fd = os.open('/dev/net/tun', os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack('16sH', name.encode(),
                                           IFF_TAP | IFF_NO_PI | IFF_VNET_HDR))
    print('open', flush=True)
    sys.stdin.readline()
    if mode == 'tcp':
        print('acked', tcp(fd, size), flush=True)
    else:
        f = segment(1, 1, 0x18, b'z' * size, tso=mode != 'nogso')
        print('wrote', os.write(fd, f), flush=True)
    sys.stdin.readline()


if __name__ == '__main__':
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else 'frame')
