# SPDX-License-Identifier: BSD-3-Clause
"""fpb6: the IPv6 side of fpbench (issue 34), imported by fpbench.py.

`fpbench.py --family 4,6` runs S1 and S3 over IPv6 for the null, nft and cubevs paths, each
IPv6 trial right after its IPv4 twin (same cell, same trial number), on the same bed with IPv6
added:

    gen ns G (2001:2:0:1::2, the node's default router; the S3 reflector behind it)
        -- W (2001:2:0:1::1, --node-ip6) node ns S (2001:2:0:6::1, nft only) -- X sink ns

S1: world flows from 2001:2:0:80::1:0 + f / 16 (the flow in the source's last 32 bits), port
1024 + f % 16, to [node6]:host port, 74-byte TCP ACKs (the IPv4 ones are 60: 20 more bytes of
IP header); nft DNATs them (table ip6) to [2001:2:0:6::2]:80, cubevs-fp to its guest's learnt
address (the EUI-64 one of its MAC until the guest sends from another; the sink drops all).
S3: guest UDP from 2001:2:0:6::2 (in cubevs-fp's --guest-prefix6) to [2001:2:0:40::1]:9,
translated to the node's IPv6 address (nft: snat, as the IPv4 rule), reflected back. The
IPv6 neighbours are static, as the IPv4 ones: the sink and the reflector answer nothing.

Only addresses from 2001:2::/48 (RFC 5180) and link-local are used.
"""
import statistics

NODE_IP6, GEN_IP6 = '2001:2:0:1::1', '2001:2:0:1::2'
GUEST_PFX6 = '2001:2:0:6::/64'
NODE_SB_IP6, SBX_IP6 = '2001:2:0:6::1', '2001:2:0:6::2'
REMOTE_NET6, REMOTE_IP6 = '2001:2:0:40::/64', '2001:2:0:40::1'
CLIENT_NET6, CLIENT_BASE6 = '2001:2:0:80::/64', '2001:2:0:80::1:0'
SCENARIOS = ('S1', 'S3')
PATHS = ('null', 'nft', 'cubevs')


def supported(scen, path):
    return scen in SCENARIOS and path in PATHS


def up(bed, run):
    """IPv6 on the node's two links, beside the IPv4 of Bed.up(): static neighbours, the
    routes of S1's clients and S3's remote net, and a default route through the generator
    namespace (cubevs-fp learns its IPv6 next hop from it)."""
    n = bed.ns_n
    for k in ('all', 'default', bed.if_w, bed.if_s):
        run(bed.ns(n, 'sysctl', '-qw', 'net.ipv6.conf.%s.disable_ipv6=0' % k), check=False)
    # No DAD: a tentative address answers nothing, and no one else is on these links.
    run(['ip', '-n', n, 'addr', 'add', NODE_IP6 + '/64', 'dev', bed.if_w, 'nodad'])
    run(['ip', '-n', n, 'addr', 'add', NODE_SB_IP6 + '/64', 'dev', bed.if_s, 'nodad'])
    for a, mac, i in ((GEN_IP6, bed.mac_g, bed.if_w), (SBX_IP6, bed.mac_x, bed.if_s)):
        run(['ip', '-n', n, 'neigh', 'replace', a, 'lladdr', mac, 'dev', i, 'nud', 'permanent'])
    for net in (REMOTE_NET6, CLIENT_NET6, 'default'):
        run(['ip', '-n', n, '-6', 'route', 'add', net, 'via', GEN_IP6, 'dev', bed.if_w])


def forwarding(bed, run):
    run(bed.ns(bed.ns_n, 'sysctl', '-qw', 'net.ipv6.conf.all.forwarding=1'))


def nft_rules(bed, scen, hostport, sbx_port):
    """The nftables baseline in the ip6 family, the IPv4 rules' twins."""
    if scen == 'S3':
        return ('table ip6 fpb {\n chain post {\n'
                '  type nat hook postrouting priority 100;\n'
                '  oifname "%s" ip6 saddr %s snat to %s\n }\n}\n' %
                (bed.if_w, SBX_IP6, NODE_IP6))
    return ('table ip6 fpb {\n chain pre {\n  type nat hook prerouting priority -100;\n'
            '  ip6 daddr %s tcp dport %d dnat to [%s]:%d\n'
            '  ip6 daddr %s udp dport %d dnat to [%s]:%d\n }\n}\n' %
            (NODE_IP6, hostport, SBX_IP6, sbx_port, NODE_IP6, hostport, SBX_IP6, sbx_port))


def cubevs_args():
    return ['--node-ip6', NODE_IP6, '--guest-prefix6', GUEST_PFX6]


def gen_addrs(side, remote_port):
    """(source, destination, destination port or None for the host port) of fpgen."""
    if side == 'world':
        return CLIENT_BASE6, NODE_IP6, None
    if side == 'sandbox':
        return SBX_IP6, REMOTE_IP6, remote_port
    raise ValueError('no IPv6 for the %s side' % side)


def sessions(stats):
    """cubevs-fp's IPv6 sessions: a table of their own in /stats."""
    return stats.get('ipv6Sessions')


def summarize(results):
    """IPv6 against IPv4 per scenario, flows and path: medians of each, and the IPv6/IPv4
    ratio within each trial (the two ran seconds apart), median and range over trials; and
    cubevs over nft in IPv6."""
    pps = {(r['scenario'], r['flows'], r['path'], r.get('family', 4), r.get('trial')): r['pps']
           for r in results if r.get('pps')}
    cells = {}
    for (scen, flows, path, fam, t), v in pps.items():
        if fam != 6:
            continue
        c = cells.setdefault((scen, flows, path), {'v6': [], 'v4': [], 'ratio': [], 'x_nft': []})
        c['v6'].append(v)
        v4 = pps.get((scen, flows, path, 4, t))
        if v4:
            c['v4'].append(v4)
            c['ratio'].append(v / v4)
        nft = pps.get((scen, flows, 'nft', 6, t))
        if nft and path != 'nft':
            c['x_nft'].append(v / nft)
    rows = []
    for (scen, flows, path), c in sorted(cells.items(), key=lambda kv: (
            kv[0][0], kv[0][1], PATHS.index(kv[0][2]))):
        med = lambda k: statistics.median(c[k]) if c[k] else None
        rows.append({'scenario': scen, 'flows': flows, 'path': path, 'trials': len(c['v6']),
                     'mpps4': med('v4') and med('v4') / 1e6, 'mpps6': med('v6') / 1e6,
                     'ratio_median': med('ratio'),
                     'ratio_min': min(c['ratio']) if c['ratio'] else None,
                     'ratio_max': max(c['ratio']) if c['ratio'] else None,
                     'x_nft6': med('x_nft')})
    return rows


def lcore_rows(lcore4, lcore6):
    """cubevs-fp's worker per frame in both families (fpbench's summarize_lcore() rows)."""
    l4 = {(r['scenario'], r['flows'], r['path']): r for r in lcore4}
    return [dict(r, busy4=l4.get(k, {}).get('busy_ns'), pipe4=l4.get(k, {}).get('pipe_ns'))
            for r in lcore6 for k in [(r['scenario'], r['flows'], r['path'])]]


def print_table(rows, out, fmt, lcore=()):
    if not rows:
        return
    out.write('\nIPv6 against IPv4 (S1: 74-byte IPv6 ACKs against 60-byte IPv4 ones; S3: 62-byte '
              'UDP frames against 60): Mpps medians; ratio IPv6/IPv4 within each trial, median '
              '(min-max)\n| scenario | flows | path | trials | IPv4 Mpps | IPv6 Mpps | '
              'IPv6/IPv4 | IPv6 x nft |\n|---|---|---|---|---|---|---|---|\n')
    for r in rows:
        ratio = '-' if r['ratio_median'] is None else '%.2f (%.2f-%.2f)' % (
            r['ratio_median'], r['ratio_min'], r['ratio_max'])
        out.write('| %s | %d | %s | %d | %s | %.3f | %s | %s |\n' % (
            r['scenario'], r['flows'], r['path'], r['trials'], fmt(r['mpps4'], '%.3f'),
            r['mpps6'], ratio, fmt(r['x_nft6'])))
    if lcore:
        out.write('\nIPv6 against IPv4, cubevs-fp worker lcore per frame received (medians over '
                  'trials; pipeline = parse, conntrack, NAT, L2)\n| scenario | flows | path | '
                  'busy ns IPv4 | busy ns IPv6 | pipeline ns IPv4 | pipeline ns IPv6 |\n'
                  '|---|---|---|---|---|---|---|\n')
        for r in lcore:
            out.write('| %s | %d | %s | %s | %.0f | %s | %.0f |\n' % (
                r['scenario'], r['flows'], r['path'], fmt(r['busy4'], '%.0f'), r['busy_ns'],
                fmt(r['pipe4'], '%.0f'), r['pipe_ns']))
