#!/usr/bin/env python3
"""Blind injection against one established IPv6 TCP connection (run in a guest's namespace).

blind6.py HOST6 PORT IFACE GATE_DIR

blind.py's attack on an IPv6 flow: opens a connection to [HOST6]:PORT (a TCP echo service of
the world host, reached through NAT66), learns its sequence numbers by capturing its frames on
IFACE, then, as an off-path attacker that knows the 4-tuple but not the sequence numbers,
sends on IFACE (AF_PACKET, spoofing the guest): RSTs, a RST+ACK, data and a FIN far outside
the window, and one RST inside the window but not at the expected sequence. Reports as
blind.py does: phase1 (an echo right after), then, after GATE_DIR/go1, phase2.
"""
import os
import socket
import struct
import sys
import time

from blind import ACK, FIN, PSH, RST, echo, gate
from rawframes import csum


class Flow6:
    """The connection's sequence numbers as its frames on the wire show them."""

    def __init__(self, iface, cip, lport):
        self.cip, self.lport = socket.inet_pton(socket.AF_INET6, cip), lport
        self.snd_nxt = self.rcv_nxt = None
        self.macs = None
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(0x0003))
        self.s.bind((iface, 0))
        self.s.setblocking(False)

    def drain(self):
        while True:
            try:
                f = self.s.recv(65535)
            except BlockingIOError:
                return
            # Only TCP straight after the fixed header: what the guest's stack sends.
            if len(f) < 74 or f[12:14] != b'\x86\xdd' or f[20] != 6:
                continue
            plen = struct.unpack('!H', f[18:20])[0]
            sp, dp, seq, ack, doff, flags = struct.unpack('!HHIIBB', f[54:68])
            end = (seq + plen - (doff >> 4) * 4 + (1 if flags & 0x02 else 0) +
                   (1 if flags & FIN else 0)) & 0xffffffff
            if f[22:38] == self.cip and sp == self.lport:
                self.snd_nxt = end
                self.macs = (f[0:6], f[6:12])
            elif f[38:54] == self.cip and dp == self.lport:
                self.rcv_nxt = end

    def settle(self):
        time.sleep(0.3)
        self.drain()


def segment6(src, dst, sport, dport, seq, ack, flags, payload=b'', win=502):
    h = struct.pack('!HHIIBBHHH', sport, dport, seq & 0xffffffff, ack & 0xffffffff, 5 << 4,
                    flags, win, 0, 0)
    ph = src + dst + struct.pack('!I3xB', len(h) + len(payload), 6)
    c = csum(ph + h + payload)
    return h[:16] + struct.pack('!H', c) + h[18:] + payload


def main():
    host, port, iface, gates = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    sock = socket.create_connection((host, port), timeout=4)
    cip, lport = sock.getsockname()[:2]
    flow = Flow6(iface, cip, lport)
    if echo(sock, b'hello, before\n') != 'ok':
        sys.exit('the first echo failed')
    flow.settle()
    if flow.snd_nxt is None or flow.rcv_nxt is None:
        sys.exit('no frames of the connection seen on %s' % iface)
    dst_mac, src_mac = flow.macs
    src, dst = flow.cip, socket.inet_pton(socket.AF_INET6, host)

    def inject(seq, ack, flags, payload=b''):
        seg = segment6(src, dst, lport, port, seq, ack, flags, payload)
        ip6 = struct.pack('!IHBB', 6 << 28, len(seg), 6, 64) + src + dst
        flow.s.send(dst_mac + src_mac + b'\x86\xdd' + ip6 + seg)

    n, r = flow.snd_nxt, flow.rcv_nxt
    inject(n + 0x80000000, 0, RST)
    inject(n + 0x40000000, 0, RST)
    inject(n - 0x30000000, r, RST | ACK)
    inject(n + 0x50000000, r, ACK | PSH, b'EVIL\n')
    inject(n + 0x60000000, r, FIN | ACK)
    # Inside the window, not at the next sequence: the peer's RFC 5961 challenge ACK.
    inject(n + 1000, 0, RST)
    time.sleep(0.3)
    print('phase1', echo(sock, b'hello, after the blind segments\n'), flush=True)
    gate(os.path.join(gates, 'go1'))
    sock.settimeout(3)
    print('phase2', echo(sock, b'hello, after idling\n'), flush=True)


if __name__ == '__main__':
    main()
