# SPDX-License-Identifier: BSD-3-Clause
"""Shared pieces of the cubevs-fp TRex STL profiles (tools/perf/README.md).

Every profile takes its settings as tunables, in both TRex styles:
    start -f cvs_dnat.py -t flows=1000000,node_ip=198.18.0.1,host_port=20000   (older consoles)
    start -f cvs_dnat.py -t --flows 1000000 --node-ip 198.18.0.1 ...             (2.89 and later)
Addresses default to the benchmarking range 198.18.0.0/15 (RFC 2544).
"""
import argparse

from trex_stl_lib.api import (CTRexVmInsFixHwCs, Ether, IP, STLPktBuilder, STLVM, TCP, UDP)

DEFAULTS = {
    'flows': 10000,          # distinct client (address, port) pairs
    'ports_per_ip': 16,      # client ports per client address
    'client_base': '198.18.128.0',
    'node_ip': '198.18.0.1',  # cubevs-fp --node-ip (the world interface's address)
    'host_port': 20000,      # GET /sandboxes/{id}/exposed-ports/{port} -> hostPort
    'guest_ip': '169.254.68.6',
    'remote_ip': '198.18.64.1',
    'remote_port': 80,
    'pps': 1000000,          # per stream, scaled by the console's -m
    'size': 64,              # frame size on the wire, FCS included
    'seed': 0x5eed,          # SYN flood: repeatable pseudo-random tuples
}


def options(tunables, kwargs):
    """Merge the defaults with either style of tunables."""
    opts = dict(DEFAULTS)
    if tunables:
        ap = argparse.ArgumentParser(prog='cubevs-fp profile', add_help=False)
        for k, v in DEFAULTS.items():
            ap.add_argument('--' + k.replace('_', '-'), dest=k, type=type(v), default=v)
        opts.update(vars(ap.parse_args(list(tunables))))
    for k, v in kwargs.items():
        if k in DEFAULTS:
            opts[k] = type(DEFAULTS[k])(v)
    if opts['flows'] < 1 or opts['ports_per_ip'] < 1:
        raise ValueError('flows and ports_per_ip must be positive')
    return opts


def ip_int(ip):
    a = [int(x) for x in ip.split('.')]
    return a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3]


def ip_add(ip, n):
    v = ip_int(ip) + n
    return '%d.%d.%d.%d' % (v >> 24 & 255, v >> 16 & 255, v >> 8 & 255, v & 255)


def padded(pkt, size):
    """Pad to the frame size without FCS (the NIC adds 4 bytes)."""
    return pkt / ('\0' * max(0, size - 4 - len(pkt)))


def client_flows_vm(o, l4='TCP'):
    """Client (address, port) enumerated over o['flows'] tuples, checksums fixed by the NIC."""
    n_ips = (o['flows'] + o['ports_per_ip'] - 1) // o['ports_per_ip']
    vm = STLVM()
    vm.tuple_var(name='c', ip_min=o['client_base'], ip_max=ip_add(o['client_base'], n_ips - 1),
                 port_min=1024, port_max=1024 + o['ports_per_ip'] - 1, limit_flows=o['flows'])
    vm.write(fv_name='c.ip', pkt_offset='IP.src')
    vm.write(fv_name='c.port', pkt_offset=l4 + '.sport')
    vm.fix_chksum_hw(l3_offset='IP', l4_offset=l4,
                     l4_type=CTRexVmInsFixHwCs.L4_TYPE_TCP if l4 == 'TCP' else
                     CTRexVmInsFixHwCs.L4_TYPE_UDP)
    return vm


def tcp_to_node(o, flags):
    return STLPktBuilder(pkt=padded(Ether() / IP(src=o['client_base'], dst=o['node_ip']) /
                                    TCP(sport=1024, dport=o['host_port'], flags=flags,
                                        seq=1000, ack=1), o['size']),
                         vm=client_flows_vm(o))
