#!/usr/bin/env python3
"""Malformed and plain frames built with struct, for the hardening tests (issue 7).

rawframes.py pcap-world OUT NODE_IP CLIENT_IP
    write a pcap of world-port frames that must all be dropped; print the expected drop
    counters as JSON
rawframes.py send-sandbox IFACE [ROUNDS]
    send the malformed sandbox set on IFACE (AF_PACKET), ROUNDS times; print the expected
    drop counters as JSON
rawframes.py send-world IFACE DST_MAC NODE_IP SRC_IP HOST_PORT [ROUNDS]
    send malformed frames to a host port; print how many were sent
rawframes.py syn-flood IFACE DST_MAC NODE_IP HOST_PORT COUNT SRC_NET
    send COUNT SYNs from distinct sources SRC_NET.1.. (no handshake follows)
rawframes.py check-egress PCAP NODE_IP DST_IP NH_MAC LO HI
    check a capture of what left the world port: every frame SNATed to NODE_IP:LO-HI,
    to NH_MAC, with correct checksums; print the counts per protocol as JSON
"""
import json
import socket
import struct
import sys

GUEST_MAC = bytes.fromhex('20906ffcfcfc')
GW_MAC = bytes.fromhex('20906fcfcfcf')
GUEST_IP = '169.254.68.6'
GW_IP = '169.254.68.5'


def csum(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ip_b(a):
    return socket.inet_aton(a)


def eth(dst, src, etype, payload):
    return dst + src + struct.pack('!H', etype) + payload


def ipv4(src, dst, proto, payload, ttl=64, frag=0, vihl=0x45, tot=None, opts=b''):
    hl = 20 + len(opts)
    total = hl + len(payload) if tot is None else tot
    h = struct.pack('!BBHHHBBH4s4s', vihl, 0, total, 0x4242, frag, ttl, proto, 0,
                    ip_b(src), ip_b(dst)) + opts
    h = h[:10] + struct.pack('!H', csum(h)) + h[12:]
    return h + payload


def pseudo(src, dst, proto, length):
    return ip_b(src) + ip_b(dst) + struct.pack('!BBH', 0, proto, length)


def tcp(src, dst, sport, dport, flags, payload=b'', doff=5, win=65535, seq=1000, bad=False):
    h = struct.pack('!HHIIBBHHH', sport, dport, seq, 0, doff << 4, flags, win, 0, 0)
    c = csum(pseudo(src, dst, 6, len(h) + len(payload)) + h + payload)
    if bad:
        c ^= 0x5555
    return h[:16] + struct.pack('!H', c) + h[18:] + payload


def udp(src, dst, sport, dport, payload=b''):
    h = struct.pack('!HHHH', sport, dport, 8 + len(payload), 0)
    c = csum(pseudo(src, dst, 17, len(h) + len(payload)) + h + payload) or 0xffff
    return h[:6] + struct.pack('!H', c) + payload


def icmp(typ, code, rest, payload=b''):
    h = struct.pack('!BBH', typ, code, 0) + rest + payload
    return h[:2] + struct.pack('!H', csum(h)) + h[4:]


def arp(op, sha, spa, tha, tpa, hlen=6, plen=4):
    return struct.pack('!HHBBH6s4s6s4s', 1, 0x0800, hlen, plen, op, sha, ip_b(spa), tha,
                       ip_b(tpa))


def pcap_write(path, frames):
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack('<IIII', 1, i, len(fr), len(fr)))
            f.write(fr)


def pcap_read(path):
    with open(path, 'rb') as f:
        data = f.read()
    off, out = 24, []
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack('<IIII', data[off:off + 16])
        out.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return out


# A well-formed IPv6 packet with no next header (59) and no payload, from fd00::1 to fd00::2.
IPV6_NONE = (b'\x60\0\0\0' + b'\0\0' + b'\x3b\x40' + b'\xfd' + b'\0' * 14 + b'\x01' +
             b'\xfd' + b'\0' * 14 + b'\x02')


def world_set(node, client, wmac=b'\x02\0\0\0\0\x01', cmac=b'\x02\0\0\0\0\x02'):
    """(frame, expected drop reason) pairs for the world port with nothing registered."""
    syn = tcp(client, node, 40000, 20000, 0x02)
    rows = [
        (b'\x02' * 10, 'runt'),
        (eth(wmac, cmac, 0x86dd, IPV6_NONE), 'ipv6'),
        (eth(wmac, cmac, 0x8100, b'\0\x05\x08\x00' + ipv4(client, node, 6, syn)),
         'ethertype'),
        (eth(wmac, cmac, 0x0800, ipv4(client, node, 6, syn, vihl=0x44)), 'ip_header'),
        (eth(wmac, cmac, 0x0800, ipv4(client, node, 6, syn, tot=1400)), 'ip_length'),
        (eth(wmac, cmac, 0x0800, ipv4(client, node, 6, syn, frag=0x2000)), 'fragment'),
        (eth(wmac, cmac, 0x0800, ipv4(client, node, 6, syn[:12])), 'l4_header'),
        (eth(wmac, cmac, 0x0800, ipv4(client, node, 47, b'\0' * 24)), 'proto'),
        (eth(wmac, cmac, 0x0800, ipv4(client, '198.18.0.77', 6, syn)), 'not_node_ip'),
        (eth(wmac, b'\xff' * 6, 0x0800, ipv4(client, node, 6, syn)), 'bad_source'),
        (eth(wmac, cmac, 0x0800, ipv4(node, node, 6, tcp(node, node, 1, 20000, 2))),
         'bad_source'),
        (eth(wmac, cmac, 0x0800, ipv4(client, node, 6, syn)), 'no_hostport'),
        (eth(wmac, cmac, 0x0800, ipv4(client, node, 17, udp(client, node, 53, 30001))),
         'no_session'),
        (eth(wmac, cmac, 0x0800, ipv4(client, node, 1, icmp(3, 3, b'\0' * 4,
         ipv4(node, '198.19.0.2', 17, udp(node, '198.19.0.2', 30001, 53)[:8])))),
         'icmp_no_flow'),
        (eth(wmac, cmac, 0x0806, arp(1, cmac, client, b'\0' * 6, node)), 'arp'),
    ]
    return rows


def sandbox_set(rnd=0):
    """(frame, expected drop reason) pairs sent from a guest."""
    g, r = GUEST_IP, '198.19.0.2'
    syn = tcp(g, r, 41000 + rnd, 80, 0x02)
    dg = udp(g, r, 5000, 53, b'x' * 8)
    e = lambda p: eth(GW_MAC, GUEST_MAC, 0x0800, p)
    quoted = ipv4(r, g, 6, tcp(r, g, 80, 41999, 0x12))[:28]
    return [
        (eth(GW_MAC, GUEST_MAC, 0x86dd, IPV6_NONE), 'ipv6'),
        (eth(GW_MAC, GUEST_MAC, 0x86dd, b'\x60' + b'\0' * 39), 'ip6_ext'),
        (eth(GW_MAC, GUEST_MAC, 0x8100, b'\0\x05\x08\x00' + ipv4(g, r, 6, syn)), 'ethertype'),
        (e(ipv4(g, r, 6, syn, vihl=0x44)), 'ip_header'),
        (e(ipv4(g, r, 6, syn, tot=1400)), 'ip_length'),
        # A first fragment of 20 bytes of data (not a multiple of 8), a later one of 20 with MF.
        (e(ipv4(g, r, 6, syn, frag=0x2000)), 'fragment'),
        (e(ipv4(g, r, 6, syn, frag=0x2010)), 'frag_bad_length'),
        (e(ipv4(g, r, 6, tcp(g, r, 41000, 80, 0x02, doff=15))), 'l4_header'),
        (e(ipv4(g, r, 17, dg[:4])), 'l4_header'),
        (e(ipv4(g, r, 47, b'\0' * 24)), 'proto'),
        (e(ipv4('198.18.0.2', r, 17, udp('198.18.0.2', r, 5000, 53))), 'guest_spoof'),
        (e(ipv4('224.0.0.9', r, 17, udp('224.0.0.9', r, 520, 520))), 'bad_source'),
        (eth(GW_MAC, b'\x01\0\x5e\0\0\x01', 0x0800, ipv4(g, r, 6, syn)), 'bad_source'),
        (e(ipv4(g, r, 6, tcp(g, r, 41000, 80, 0x03))), 'egress_proto'),
        (e(ipv4(g, r, 1, icmp(3, 3, b'\0' * 4, quoted))), 'icmp_no_flow'),
        (eth(GW_MAC, GUEST_MAC, 0x0806, arp(1, GUEST_MAC, g, b'\0' * 6, GW_IP, hlen=8)),
         'arp'),
        (eth(GW_MAC, GUEST_MAC, 0x0806, arp(2, GUEST_MAC, g, GW_MAC, GW_IP)), 'arp'),
    ]


def tally(rows, rounds=1):
    out = {}
    for _, why in rows:
        out[why] = out.get(why, 0) + rounds
    return out


def raw_socket(iface):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    return s


def main():
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == 'pcap-world':
        rows = world_set(a[1], a[2])
        pcap_write(a[0], [f for f, _ in rows])
        print(json.dumps({'frames': len(rows), 'drops': tally(rows)}))
    elif cmd == 'send-sandbox':
        rounds = int(a[1]) if len(a) > 1 else 1
        s = raw_socket(a[0])
        rows = sandbox_set()
        for _ in range(rounds):
            for f, _ in rows:
                s.send(f)
        print(json.dumps({'frames': len(rows) * rounds, 'drops': tally(rows, rounds)}))
    elif cmd == 'send-world':
        iface, dmac, node, src, hp = a[0], bytes.fromhex(a[1].replace(':', '')), a[2], a[3], \
            int(a[4])
        rounds = int(a[5]) if len(a) > 5 else 1
        s = raw_socket(iface)
        smac = open('/sys/class/net/%s/address' % iface).read().strip()
        smac = bytes.fromhex(smac.replace(':', ''))
        e = lambda p, sm=smac: eth(dmac, sm, 0x0800, p)
        frames = [
            e(ipv4(src, node, 6, tcp(src, node, 42000, hp, 0x03))),
            e(ipv4(src, node, 6, tcp(src, node, 42001, hp, 0x00))),
            e(ipv4(src, node, 6, tcp(src, node, 42002, hp, 0xff))),
            e(ipv4(src, node, 6, tcp(src, node, 42003, hp, 0x06))),
            e(ipv4(src, node, 6, tcp(src, node, 42004, hp, 0x10, b'junk'))),
            e(ipv4(src, node, 6, tcp(src, node, 42005, hp, 0x02, bad=True))),
            e(ipv4(src, node, 6, tcp(src, node, 42006, hp, 0x02), frag=0x2000)),
            e(ipv4(src, node, 6, tcp(src, node, 42007, hp, 0x02), ttl=0)),
            e(ipv4(src, node, 6, tcp(src, node, 42008, hp, 0x02, doff=15))),
            eth(dmac, b'\xff' * 6, 0x0800, ipv4(src, node, 6, tcp(src, node, 42009, hp, 2))),
            e(ipv4(node, node, 6, tcp(node, node, 42010, hp, 0x02))),
            e(ipv4(GUEST_IP, node, 6, tcp(GUEST_IP, node, 42011, hp, 0x02))),
        ]
        for _ in range(rounds):
            for f in frames:
                s.send(f)
        print(len(frames) * rounds)
    elif cmd == 'syn-flood':
        iface, dmac, node, hp, count, net = a[0], bytes.fromhex(a[1].replace(':', '')), \
            a[2], int(a[3]), int(a[4]), a[5]
        s = raw_socket(iface)
        smac = bytes.fromhex(open('/sys/class/net/%s/address' % iface).read().strip()
                             .replace(':', ''))
        base = struct.unpack('!I', ip_b(net))[0]
        for i in range(count):
            src = socket.inet_ntoa(struct.pack('!I', base + 1 + i % 250 + (i // 250) * 256))
            s.send(eth(dmac, smac, 0x0800,
                       ipv4(src, node, 6, tcp(src, node, 10000 + i % 50000, hp, 0x02))))
        print(count)
    elif cmd == 'check-egress':
        path, node, dst, nh = a[0], a[1], a[2], bytes.fromhex(a[3].replace(':', ''))
        lo, hi = int(a[4]), int(a[5])
        counts, bad = {}, []
        for f in pcap_read(path):
            why = check_egress_frame(f, node, dst, nh, lo, hi)
            if why:
                bad.append(why)
                continue
            proto = f[23]
            counts[proto] = counts.get(proto, 0) + 1
        print(json.dumps({'tcp': counts.get(6, 0), 'udp': counts.get(17, 0),
                          'icmp': counts.get(1, 0), 'bad': bad[:5], 'nbad': len(bad)}))
    else:
        sys.exit('unknown command ' + cmd)


def check_egress_frame(f, node, dst, nh, lo, hi):
    if len(f) < 34 or f[12:14] != b'\x08\x00':
        return 'not IPv4'
    if f[0:6] != nh:
        return 'dst MAC %s' % f[0:6].hex()
    ihl = (f[14] & 15) * 4
    ip = f[14:14 + ihl]
    tot = struct.unpack('!H', f[16:18])[0]
    if csum(ip) != 0:
        return 'IP checksum'
    if ip[12:16] != ip_b(node) or ip[16:20] != ip_b(dst):
        return 'addresses %s -> %s' % (socket.inet_ntoa(ip[12:16]), socket.inet_ntoa(ip[16:20]))
    l4 = f[14 + ihl:14 + tot]
    proto = f[23]
    if proto == 1:
        if csum(l4) != 0:
            return 'ICMP checksum'
        port = struct.unpack('!H', l4[4:6])[0]
    else:
        if proto == 17 and l4[6:8] == b'\0\0':
            pass
        elif csum(pseudo(node, dst, proto, len(l4)) + l4) != 0:
            return 'L4 checksum'
        port = struct.unpack('!H', l4[0:2])[0]
    if not lo <= port <= hi:
        return 'SNAT port %d' % port
    return None


if __name__ == '__main__':
    main()
