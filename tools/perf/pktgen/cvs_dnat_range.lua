-- SPDX-License-Identifier: BSD-3-Clause
-- S1 with pktgen-dpdk range mode: TCP from many client (address, port) pairs to the node's
-- host port. cubevs-fp forwards only flows that have a session, and a session is opened by a
-- SYN: create them first (tools/perf/README.md), then run this for the established phase.
-- Edit the settings below; run: pktgen -l ... -- -P -m "[1:2].0" -f cvs_dnat_range.lua
package.path = package.path .. ";?.lua;test/?.lua;app/?.lua;"
require "Pktgen"

local port        = "0"
local node_mac    = "02:00:00:00:00:01"   -- MAC of the node's NIC (cubevs-fp world port)
local node_ip     = "198.18.0.1"          -- cubevs-fp node IP
local host_port   = 20000                 -- hostPort from GET /sandboxes/{id}/exposed-ports/{p}
local client_lo   = "198.18.128.0"        -- clients: client_lo .. client_hi
local client_hi   = "198.18.167.15"       -- 10,000 addresses x ports below = flows
local sport_lo    = 1024
local sport_hi    = 1024                  -- raise for more flows per address
local rate_pct    = 100                   -- percent of line rate
local seconds     = 30                    -- bounded run

pktgen.set_range(port, "on")
pktgen.range.dst_mac(port, "start", node_mac)
pktgen.range.dst_ip(port, "start", node_ip)
pktgen.range.dst_ip(port, "inc", "0.0.0.0")
pktgen.range.dst_ip(port, "min", node_ip)
pktgen.range.dst_ip(port, "max", node_ip)
pktgen.range.src_ip(port, "start", client_lo)
pktgen.range.src_ip(port, "inc", "0.0.0.1")
pktgen.range.src_ip(port, "min", client_lo)
pktgen.range.src_ip(port, "max", client_hi)
pktgen.range.dst_port(port, "start", host_port)
pktgen.range.dst_port(port, "inc", 0)
pktgen.range.dst_port(port, "min", host_port)
pktgen.range.dst_port(port, "max", host_port)
pktgen.range.src_port(port, "start", sport_lo)
pktgen.range.src_port(port, "inc", 1)
pktgen.range.src_port(port, "min", sport_lo)
pktgen.range.src_port(port, "max", sport_hi)
pktgen.range.ip_proto(port, "tcp")
pktgen.range.pkt_size(port, "start", 64)
pktgen.range.pkt_size(port, "inc", 0)
pktgen.range.pkt_size(port, "min", 64)
pktgen.range.pkt_size(port, "max", 64)
pktgen.set(port, "rate", rate_pct)

pktgen.clr()
pktgen.start(port)
pktgen.delay(seconds * 1000)
pktgen.stop(port)
pktgen.delay(500)
local st = pktgen.portStats(port, "port")[tonumber(port)]
printf("cubevs-fp S1: port %s sent %d packets in %d s\n", port, st.opackets, seconds)
