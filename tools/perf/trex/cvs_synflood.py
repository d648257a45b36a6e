# SPDX-License-Identifier: BSD-3-Clause
"""S2/S4 on a real NIC: SYNs from pseudo-random client tuples with a fixed seed, so every run
offers the same sequence. 'flows' bounds the distinct tuples (limit of the repeatable random
generator); compare sessions_created in GET /stats with the SYNs sent.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cvs_profile import ip_int, options, padded  # noqa: E402
from trex_stl_lib.api import (CTRexVmInsFixHwCs, Ether, IP, STLPktBuilder, STLStream,  # noqa: E402
                              STLTXCont, STLVM, TCP)


class CvsSynFlood:
    def get_streams(self, direction=0, tunables=(), **kwargs):
        o = options(tunables, kwargs)
        vm = STLVM()
        # Client address and port from two repeatable generators (fixed seeds), inside
        # 198.18.128.0/17 and ports 1024-65535.
        lo = ip_int(o['client_base'])
        vm.repeatable_random_var(fv_name='sip', size=4, limit=o['flows'], seed=o['seed'],
                                 min_value=lo, max_value=lo + 32767)
        vm.repeatable_random_var(fv_name='sport', size=2, limit=o['flows'],
                                 seed=o['seed'] ^ 0xa5a5, min_value=1024, max_value=65535)
        vm.write(fv_name='sip', pkt_offset='IP.src')
        vm.write(fv_name='sport', pkt_offset='TCP.sport')
        vm.fix_chksum_hw(l3_offset='IP', l4_offset='TCP', l4_type=CTRexVmInsFixHwCs.L4_TYPE_TCP)
        pkt = padded(Ether() / IP(src=o['client_base'], dst=o['node_ip']) /
                     TCP(sport=1024, dport=o['host_port'], flags='S', seq=1000), o['size'])
        return [STLStream(packet=STLPktBuilder(pkt=pkt, vm=vm), mode=STLTXCont(pps=o['pps']))]


def register():
    return CvsSynFlood()
