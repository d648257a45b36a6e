# SPDX-License-Identifier: BSD-3-Clause
"""S1 on a real NIC: exposed-port DNAT of established flows (TRex port -> node NIC).

Phase 1 sends one SYN per flow (a single burst, paced low enough that cubevs-fp creates every
session); phase 2 then sends ACKs of the same flows continuously. Use flows=10000 and
flows=1000000 (the table must hold them: --max-sessions). Count on the sandbox side.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cvs_profile import options, tcp_to_node  # noqa: E402
from trex_stl_lib.api import STLStream, STLTXCont, STLTXSingleBurst  # noqa: E402


class CvsDnat:
    def get_streams(self, direction=0, tunables=(), **kwargs):
        o = options(tunables, kwargs)
        syn_pps = min(o['pps'], 200000)
        return [
            STLStream(name='open', packet=tcp_to_node(o, 'S'),
                      mode=STLTXSingleBurst(pps=syn_pps, total_pkts=o['flows']),
                      next='established'),
            STLStream(name='established', self_start=False, isg=500000.0,
                      packet=tcp_to_node(o, 'A'), mode=STLTXCont(pps=o['pps'])),
        ]


def register():
    return CvsDnat()
