-- SPDX-License-Identifier: BSD-3-Clause
-- Two-port pktgen run for the sandbox -> world direction or for a plain forwarding ceiling
-- (dpdk-testpmd io between the same ports): UDP from port 1 (wired to the sandbox side) over
-- a range of remote addresses, received on port 0. Rates are read on both ports at the end.
package.path = package.path .. ";?.lua;test/?.lua;app/?.lua;"
require "Pktgen"

local tx, rx      = "1", "0"
local gw_mac      = "20:90:6f:cf:cf:cf"   -- the gateway MAC cubevs-fp answers on sandbox ports
local guest_ip    = "169.254.68.6"
local remote_lo   = "198.18.64.1"
local remote_hi   = "198.18.103.16"       -- 10,000 remote addresses
local seconds     = 30

pktgen.set_range(tx, "on")
pktgen.range.dst_mac(tx, "start", gw_mac)
pktgen.range.src_ip(tx, "start", guest_ip)
pktgen.range.src_ip(tx, "inc", "0.0.0.0")
pktgen.range.src_ip(tx, "min", guest_ip)
pktgen.range.src_ip(tx, "max", guest_ip)
pktgen.range.dst_ip(tx, "start", remote_lo)
pktgen.range.dst_ip(tx, "inc", "0.0.0.1")
pktgen.range.dst_ip(tx, "min", remote_lo)
pktgen.range.dst_ip(tx, "max", remote_hi)
pktgen.range.ip_proto(tx, "udp")
pktgen.range.pkt_size(tx, "start", 64)
pktgen.range.pkt_size(tx, "inc", 0)
pktgen.range.pkt_size(tx, "min", 64)
pktgen.range.pkt_size(tx, "max", 64)
pktgen.set(tx, "rate", 100)

pktgen.clr()
pktgen.start(tx)
pktgen.delay(seconds * 1000)
pktgen.stop(tx)
pktgen.delay(500)
local s = pktgen.portStats(tx, "port")[tonumber(tx)]
local r = pktgen.portStats(rx, "port")[tonumber(rx)]
printf("sent %d on port %s, received %d on port %s: %.3f Mpps delivered\n",
       s.opackets, tx, r.ipackets, rx, r.ipackets / seconds / 1e6)
