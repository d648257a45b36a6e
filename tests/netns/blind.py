#!/usr/bin/env python3
"""Blind injection against one established TCP connection (run in the client namespace).

blind.py HOST PORT IFACE GATE_DIR

Opens a connection to HOST:PORT (a TCP echo service behind an exposed port) and learns its
sequence numbers by capturing its frames on IFACE. Then, as an off-path attacker that knows
the 4-tuple but not the sequence numbers, sends on IFACE (AF_PACKET, spoofing the client):
RSTs, a RST+ACK, data and a FIN at sequence numbers far outside the window, and one RST inside
the window but not at the expected sequence. Phases, each reported on one line of stdout:

  phase1 ok|failed   an echo right after the injection
  (waits for GATE_DIR/go1: the test moves the clock past the CLOSE timeout)
  phase2 ok|failed   an echo on the same connection after the idle spell
  rst sent           a RST at the exact next sequence (only after phase2 ok)
  (waits for GATE_DIR/go2)
  phase3 reset|...   what the connection does then: reset, timeout, eof or ok
"""
import os
import socket
import struct
import sys
import time

from rawframes import csum, eth, ip_b, ipv4, pseudo

FIN, SYN, RST, ACK, PSH = 0x01, 0x02, 0x04, 0x10, 0x08


class Flow:
    """The connection's sequence numbers as its frames on the wire show them."""

    def __init__(self, iface, cip, lport):
        self.cip, self.lport = ip_b(cip), lport
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
            if len(f) < 54 or f[12:14] != b'\x08\x00' or f[23] != 6:
                continue
            ihl = (f[14] & 15) * 4
            tot = struct.unpack('!H', f[16:18])[0]
            t = 14 + ihl
            sp, dp, seq, ack, doff, flags = struct.unpack('!HHIIBB', f[t:t + 14])
            end = (seq + tot - ihl - (doff >> 4) * 4 + (1 if flags & SYN else 0) +
                   (1 if flags & FIN else 0)) & 0xffffffff
            if f[26:30] == self.cip and sp == self.lport:
                self.snd_nxt = end
                self.macs = (f[0:6], f[6:12])
            elif f[30:34] == self.cip and dp == self.lport:
                self.rcv_nxt = end

    def settle(self):
        time.sleep(0.3)
        self.drain()


def segment(src, dst, sport, dport, seq, ack, flags, payload=b'', win=502):
    h = struct.pack('!HHIIBBHHH', sport, dport, seq & 0xffffffff, ack & 0xffffffff, 5 << 4,
                    flags, win, 0, 0)
    c = csum(pseudo(src, dst, 6, len(h) + len(payload)) + h + payload)
    return h[:16] + struct.pack('!H', c) + h[18:] + payload


def echo(sock, data):
    try:
        sock.sendall(data)
        got = b''
        while len(got) < len(data):
            chunk = sock.recv(65536)
            if not chunk:
                return 'eof'
            got += chunk
        return 'ok' if got == data else 'wrong %r' % got
    except ConnectionResetError:
        return 'reset'
    except socket.timeout:
        return 'timeout'
    except OSError as e:
        return 'error %s' % e


def gate(path):
    for _ in range(600):
        if os.path.exists(path):
            return
        time.sleep(0.1)
    sys.exit('gate %s never opened' % path)


def main():
    host, port, iface, gates = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    sock = socket.create_connection((host, port), timeout=4)
    cip, lport = sock.getsockname()
    flow = Flow(iface, cip, lport)
    if echo(sock, b'hello, before') != 'ok':
        sys.exit('the first echo failed')
    flow.settle()
    if flow.snd_nxt is None or flow.rcv_nxt is None:
        sys.exit('no frames of the connection seen on %s' % iface)
    dst_mac, src_mac = flow.macs

    def inject(seq, ack, flags, payload=b''):
        seg = segment(cip, host, lport, port, seq, ack, flags, payload)
        flow.s.send(eth(dst_mac, src_mac, 0x0800, ipv4(cip, host, 6, seg)))

    n, r = flow.snd_nxt, flow.rcv_nxt
    inject(n + 0x80000000, 0, RST)
    inject(n + 0x40000000, 0, RST)
    inject(n - 0x30000000, r, RST | ACK)
    inject(n + 0x50000000, r, ACK | PSH, b'EVIL')
    inject(n + 0x60000000, r, FIN | ACK)
    # Inside the window, not at the next sequence: the guest's RFC 5961 challenge ACK.
    inject(n + 1000, 0, RST)
    time.sleep(0.3)
    print('phase1', echo(sock, b'hello, after the blind segments'), flush=True)
    gate(os.path.join(gates, 'go1'))
    res = echo(sock, b'hello, after idling')
    print('phase2', res, flush=True)
    if res != 'ok':
        return
    flow.settle()
    inject(flow.snd_nxt, 0, RST)
    print('rst sent', flush=True)
    gate(os.path.join(gates, 'go2'))
    print('phase3', echo(sock, b'hello, after the real reset'), flush=True)


if __name__ == '__main__':
    main()
