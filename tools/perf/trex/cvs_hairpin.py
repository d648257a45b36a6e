# SPDX-License-Identifier: BSD-3-Clause
"""S5 on a real NIC: hairpin, sandbox A -> node IP : host port of sandbox B (same node).
Send from the TRex port wired to sandbox A's interface; count on sandbox B's interface, where
frames arrive SNATed to node IP : SNAT port and DNATed to the guest. Like cvs_dnat.py, phase 1
opens every flow with a SYN, phase 2 sends ACKs. Needs the hairpin work of issue 4.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cvs_profile import options, padded  # noqa: E402
from trex_stl_lib.api import (CTRexVmInsFixHwCs, Ether, IP, STLPktBuilder, STLStream,  # noqa: E402
                              STLTXCont, STLTXSingleBurst, STLVM, TCP)


def pkt(o, flags):
    vm = STLVM()
    vm.var(name='sport', min_value=1024, max_value=1024 + o['flows'] - 1, size=2, op='inc')
    vm.write(fv_name='sport', pkt_offset='TCP.sport')
    vm.fix_chksum_hw(l3_offset='IP', l4_offset='TCP', l4_type=CTRexVmInsFixHwCs.L4_TYPE_TCP)
    p = padded(Ether(src='20:90:6f:fc:fc:fc', dst='20:90:6f:cf:cf:cf') /
               IP(src=o['guest_ip'], dst=o['node_ip']) /
               TCP(sport=1024, dport=o['host_port'], flags=flags, seq=1000, ack=1), o['size'])
    return STLPktBuilder(pkt=p, vm=vm)


class CvsHairpin:
    def get_streams(self, direction=0, tunables=(), **kwargs):
        o = options(tunables, kwargs)
        if o['flows'] > 64000:
            raise ValueError('hairpin flows come from one guest address: at most 64000')
        return [
            STLStream(name='open', packet=pkt(o, 'S'),
                      mode=STLTXSingleBurst(pps=min(o['pps'], 200000), total_pkts=o['flows']),
                      next='established'),
            STLStream(name='established', self_start=False, isg=500000.0, packet=pkt(o, 'A'),
                      mode=STLTXCont(pps=o['pps'])),
        ]


def register():
    return CvsHairpin()
