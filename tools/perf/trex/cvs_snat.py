# SPDX-License-Identifier: BSD-3-Clause
"""S3 on a real NIC: egress SNAT, sandbox -> world. Send it from the TRex port wired to the
interface registered as the sandbox (guest IP/MAC as cubevs-fp expects: 169.254.68.6,
20:90:6f:fc:fc:fc, to the gateway MAC 20:90:6f:cf:cf:cf). The world-side port receives the
SNATed frames (source = node IP : SNAT port). Replies need a stateful peer (TRex ASTF or a real
server); this stateless profile measures the outbound half and session creation.
Needs the egress work of issue 4 in cubevs-fp.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cvs_profile import ip_add, options, padded  # noqa: E402
from trex_stl_lib.api import (CTRexVmInsFixHwCs, Ether, IP, STLPktBuilder, STLStream,  # noqa: E402
                              STLTXCont, STLVM, UDP)


class CvsSnat:
    def get_streams(self, direction=0, tunables=(), **kwargs):
        o = options(tunables, kwargs)
        vm = STLVM()
        # The guest address is fixed; flows differ by guest port and remote address.
        n_remote = (o['flows'] + o['ports_per_ip'] - 1) // o['ports_per_ip']
        vm.tuple_var(name='r', ip_min=o['remote_ip'], ip_max=ip_add(o['remote_ip'], n_remote - 1),
                     port_min=1024, port_max=1024 + o['ports_per_ip'] - 1,
                     limit_flows=o['flows'])
        vm.write(fv_name='r.ip', pkt_offset='IP.dst')
        vm.write(fv_name='r.port', pkt_offset='UDP.sport')
        vm.fix_chksum_hw(l3_offset='IP', l4_offset='UDP', l4_type=CTRexVmInsFixHwCs.L4_TYPE_UDP)
        pkt = padded(Ether(src='20:90:6f:fc:fc:fc', dst='20:90:6f:cf:cf:cf') /
                     IP(src=o['guest_ip'], dst=o['remote_ip']) /
                     UDP(sport=1024, dport=o['remote_port']), o['size'])
        return [STLStream(packet=STLPktBuilder(pkt=pkt, vm=vm), mode=STLTXCont(pps=o['pps']))]


def register():
    return CvsSnat()
