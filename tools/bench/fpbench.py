#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""fpbench: side-by-side benchmark of cubevs-fp and its baselines on veth namespaces.

Topology, built fresh for every trial (names carry a per-run id):

    gen ns G (198.18.0.2) -- W (198.18.0.1) node ns S (198.18.1.1) -- X (198.18.1.2) sink ns
           fpgen (live frames)          path under test                  fpsink (XDP_DROP)

Paths: null (fpsink on W itself: the generator + veth cost), nft (nftables DNAT + conntrack),
tc / tc-ct (fpdut TC DNAT + redirect, -ct with the CubeVS-shaped 1M hash session map),
xdp / xdp-ct (same in XDP), testpmd (dpdk-testpmd io between net_af_xdp on W and S: the
AF_XDP ceiling), cubevs (cubevs-fp with W as world interface and S as a sandbox), cubevs-pcsum
(the same, its generator leaving L4 checksums partial as TX checksum offload does).

Layouts: 2cpu (generator on CPU0; W's NAPI thread, the DPDK lcore, on CPU1) is the one all
paths share; 1cpu (everything on CPU0, self-clocked, lossless) applies to kernel paths only.

--family 4,6 adds S1 and S3 over IPv6 for null, nft and cubevs, each right after its IPv4
twin, and a table of IPv6 against IPv4 (fpb6.py has the IPv6 bed and addresses).

Every load is bounded in packets and seconds; only addresses from 198.18.0.0/15 (IPv6:
2001:2::/48) are used.
Global sysctls touched (nf_conntrack_max, conntrack hashsize) are restored; only this run's
namespaces are removed and only processes this run started are signalled, by PID.
"""
import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

import fpb6

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))

GEN_IP, NODE_IP, NODE_SB_IP, SBX_IP = '198.18.0.2', '198.18.0.1', '198.18.1.1', '198.18.1.2'
NODE_SB2_IP, SBX2_IP = '198.18.3.1', '198.18.3.2'   # sandbox B of the hairpin scenario
REMOTE_NET, REMOTE_IP, REMOTE_PORT = '198.18.64.0/18', '198.18.64.1', 9
SANDBOX_CIDR = '198.19.192.0/18'     # cubevs-fp's sandbox addresses (cube-dev), in range too
CLIENT_BASE = '198.18.128.0'   # flows: 198.18.128.0 + f / 16, port 1024 + f % 16
PORTS_PER_IP = 16
HOSTPORT, SBX_PORT = 20000, 80
GW_MAC = '20:90:6f:cf:cf:cf'     # cubevs-fp's default --gateway-mac
API = '127.0.0.1:9180'
KERNEL_PATHS = ('null', 'nft', 'tc', 'tc-ct', 'xdp', 'xdp-ct')
DPDK_PATHS = ('testpmd', 'cubevs', 'cubevs-vhost', 'cubevs-pcsum')
ALL_PATHS = ('null', 'nft', 'tc', 'tc-ct', 'xdp', 'xdp-ct', 'testpmd', 'cubevs', 'cubevs-vhost',
             'cubevs-pcsum')
# cubevs-pcsum: cubevs with the generator leaving L4 checksums partial (the pseudo-header sum),
# as a sender with TX checksum offload on hands them over; cubevs-fp completes each one.
CUBEVS_PATHS = ('cubevs', 'cubevs-vhost', 'cubevs-pcsum')
# Names of namespaces, interfaces and DPDK file prefixes start with this (--tag).
TAG = 'fpb'

VERBOSE = False


def log(msg):
    sys.stderr.write('# %s\n' % msg)
    sys.stderr.flush()


def run(cmd, check=True, timeout=60, capture=True):
    if VERBOSE:
        log('$ ' + ' '.join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE if capture else None,
                       stderr=subprocess.PIPE if capture else None, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError('%s: exit %d: %s' % (' '.join(cmd), p.returncode,
                                                 (p.stderr or '').strip()[-400:]))
    return p.stdout if capture else ''


class Procs:
    """Processes this run started, ended by PID only."""

    def __init__(self):
        self.procs = []

    def start(self, cmd, logfile=None, **kw):
        if VERBOSE:
            log('& ' + ' '.join(cmd))
        if logfile:
            with open(logfile, 'w') as f:
                p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, text=True, **kw)
        else:
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, **kw)
        self.procs.append(p)
        return p

    def stop(self, p, sig=signal.SIGTERM, wait=10):
        if p.poll() is None:
            try:
                p.send_signal(sig)
                p.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)
        out, err = p.communicate()
        out, err = out or '', err or ''
        if p in self.procs:
            self.procs.remove(p)
        return out, err

    def stop_all(self):
        for p in list(self.procs):
            try:
                self.stop(p, wait=5)
            except Exception:
                pass


class Sysctls:
    """Global settings changed for a run, put back at the end."""

    def __init__(self):
        self.saved = {}

    def set(self, path, value):
        try:
            with open(path) as f:
                old = f.read().strip()
        except OSError:
            return False
        if path not in self.saved:
            self.saved[path] = old
        try:
            with open(path, 'w') as f:
                f.write(str(value))
        except OSError as e:
            log('cannot set %s: %s' % (path, e))
            return False
        return True

    def restore(self):
        for path, old in self.saved.items():
            try:
                with open(path, 'w') as f:
                    f.write(old)
            except OSError as e:
                log('cannot restore %s to %s: %s' % (path, old, e))
        self.saved = {}


class Bed:
    """One trial's namespaces and veths."""

    counter = 0

    def __init__(self, run_id):
        Bed.counter += 1
        t = '%s%02d' % (run_id, Bed.counter % 100)
        self.tag = t
        n, i = TAG + '-' + t + '-', ('fb' if TAG == 'fpb' else TAG[:4]) + t
        self.prefix = TAG + t      # DPDK --file-prefix
        self.ns_g, self.ns_n, self.ns_x = n + 'g', n + 'n', n + 'x'
        self.if_g, self.if_w, self.if_s, self.if_x = i + 'g', i + 'w', i + 's', i + 'x'
        self.ns_y, self.if_s2, self.if_y = n + 'y', i + 'S', i + 'y'
        self.made = []
        self.family = 4

    def ns(self, ns, *cmd):
        return ['ip', 'netns', 'exec', ns] + list(cmd)

    def up(self, second_sandbox=False):
        for ns in (self.ns_g, self.ns_n, self.ns_x) + ((self.ns_y,) if second_sandbox else ()):
            run(['ip', 'netns', 'add', ns])
            self.made.append(ns)
            run(['ip', '-n', ns, 'link', 'set', 'lo', 'up'])
        run(['ip', 'link', 'add', self.if_g, 'netns', self.ns_g, 'type', 'veth', 'peer', 'name',
             self.if_w, 'netns', self.ns_n])
        run(['ip', 'link', 'add', self.if_s, 'netns', self.ns_n, 'type', 'veth', 'peer', 'name',
             self.if_x, 'netns', self.ns_x])
        for ns, i, a in ((self.ns_g, self.if_g, GEN_IP + '/24'), (self.ns_n, self.if_w,
                         NODE_IP + '/24'), (self.ns_n, self.if_s, NODE_SB_IP + '/24'),
                         (self.ns_x, self.if_x, SBX_IP + '/24')):
            run(['ip', '-n', ns, 'addr', 'add', a, 'dev', i])
            run(['ip', '-n', ns, 'link', 'set', i, 'up'])
            run(self.ns(ns, 'ethtool', '-K', i, 'tx', 'off', 'tso', 'off', 'gso', 'off'),
                check=False)
        if second_sandbox:
            run(['ip', 'link', 'add', self.if_s2, 'netns', self.ns_n, 'type', 'veth', 'peer',
                 'name', self.if_y, 'netns', self.ns_y])
            for ns, i, a in ((self.ns_n, self.if_s2, NODE_SB2_IP + '/24'),
                             (self.ns_y, self.if_y, SBX2_IP + '/24')):
                run(['ip', '-n', ns, 'addr', 'add', a, 'dev', i])
                run(['ip', '-n', ns, 'link', 'set', i, 'up'])
                run(self.ns(ns, 'ethtool', '-K', i, 'tx', 'off', 'tso', 'off', 'gso', 'off'),
                    check=False)
            self.mac_y = self.mac(self.ns_y, self.if_y)
            run(['ip', '-n', self.ns_n, 'neigh', 'replace', SBX2_IP, 'lladdr', self.mac_y,
                 'dev', self.if_s2, 'nud', 'permanent'])
        self.mac_g = self.mac(self.ns_g, self.if_g)
        self.mac_w = self.mac(self.ns_n, self.if_w)
        self.mac_s = self.mac(self.ns_n, self.if_s)
        self.mac_x = self.mac(self.ns_x, self.if_x)
        # The sink answers no ARP: static neighbours, and no reverse-path filtering.
        run(['ip', '-n', self.ns_n, 'neigh', 'replace', SBX_IP, 'lladdr', self.mac_x, 'dev',
             self.if_s, 'nud', 'permanent'])
        for k in ('all', 'default', self.if_w, self.if_s):
            run(self.ns(self.ns_n, 'sysctl', '-qw', 'net.ipv4.conf.%s.rp_filter=0' % k),
                check=False)
        run(self.ns(self.ns_n, 'sysctl', '-qw', 'net.ipv4.ip_local_port_range=10000 19999'))
        # The "internet" of S3 sits behind the generator namespace (a reflector there).
        run(['ip', '-n', self.ns_n, 'neigh', 'replace', GEN_IP, 'lladdr', self.mac_g, 'dev',
             self.if_w, 'nud', 'permanent'])
        run(['ip', '-n', self.ns_n, 'route', 'add', REMOTE_NET, 'via', GEN_IP])
        # XDP_TX from a generator needs NAPI on the receiving veth: GRO on gives veth NAPI
        # without XDP (W for world-side traffic, S for the guest side of S3/S5).
        for i in (self.if_w, self.if_s):
            run(self.ns(self.ns_n, 'ethtool', '-K', i, 'gro', 'on'), check=False)

    def mac(self, ns, i):
        out = run(['ip', '-n', ns, '-br', 'link', 'show', i])
        return out.split()[2]

    def napi_threaded(self, cpu, ns=None, iface=None):
        """Give W's NAPI (or iface's in ns) its own kthread on 'cpu' (the 2cpu layout for
        kernel paths; the S3 reflector for every path)."""
        ns, iface = ns or self.ns_n, iface or self.if_w
        run(self.ns(ns, 'sh', '-c', 'echo 1 > /sys/class/net/%s/threaded' % iface))
        want = 'napi/%s-' % iface
        pids = []
        for pid in os.listdir('/proc'):
            if not pid.isdigit():
                continue
            try:
                with open('/proc/%s/comm' % pid) as f:
                    if f.read().startswith(want):
                        pids.append(int(pid))
            except OSError:
                pass
        for pid in pids:
            os.sched_setaffinity(pid, {cpu})
        return pids

    def down(self):
        for ns in self.made:
            subprocess.run(['ip', 'netns', 'del', ns], stderr=subprocess.DEVNULL)
        self.made = []


def flows_src(flows):
    return CLIENT_BASE, min(flows, PORTS_PER_IP)


class Bench:
    def __init__(self, a):
        self.a = a
        self.procs = Procs()
        self.sysctls = Sysctls()
        self.run_id = '%03x' % random.randrange(0x1000)
        self.build = a.build
        self.tool = lambda n: os.path.join(self.build, 'tools', 'bench', n)
        self.cubevs = os.path.join(self.build, 'control', 'cubevs-fp')
        self.bed = None
        self.tmp = tempfile.mkdtemp(prefix='fpbench.')
        self.results = []
        self.table_bytes = None

    # ---- generator and sink ----

    def gen(self, bed, proto, flows, count, seconds, cpu=0, extra=(), wait=True, sport=1024,
            side='world', dport=None):
        """side: world (client -> node IP : host port), sandbox (guest -> remote: S3) or
        hairpin (guest -> node IP : host port of sandbox B: S5)."""
        src, ppi = flows_src(flows)
        dst = NODE_IP
        ns, iface, dmac = bed.ns_g, bed.if_g, bed.mac_w
        if dport is None:
            dport = getattr(bed, 'dport', HOSTPORT)
        if side != 'world':
            # One guest address: the flows differ by guest port only.
            src, ppi = SBX_IP, flows
            ns, iface, dmac = bed.ns_x, bed.if_x, bed.mac_s
            if side == 'sandbox':
                dst, dport = REMOTE_IP, REMOTE_PORT
            else:
                dport = getattr(bed, 'dport2', HOSTPORT)
        if bed.family == 6:
            src, dst, rport = fpb6.gen_addrs(side, REMOTE_PORT)
            dport = rport or dport
        cmd = bed.ns(ns, self.tool('fpgen'), '--iface', iface, '--dst-mac', dmac,
                     '--dst', dst, '--dport', str(dport), '--src', src, '--sport', str(sport),
                     '--flows', str(flows), '--ports-per-ip', str(ppi), '--proto', proto,
                     '--count', str(int(count)), '--seconds', '%.2f' % seconds, '--json',
                     *extra)
        if getattr(self, 'partial', False):
            cmd.append('--partial-csum')
        if cpu is not None:
            cmd += ['--cpu', str(cpu)]
        p = self.procs.start(cmd)
        if not wait:
            return p
        out, err = self.wait(p, seconds + 30)
        return json.loads(out.strip().splitlines()[-1]) if out.strip() else {'pps': 0}

    def wait(self, p, timeout):
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        out, err = self.procs.stop(p)
        if p.returncode not in (0, None) and err:
            log(err.strip()[-300:])
        return out, err

    def sink_start(self, bed, warmup, seconds, path=None, where='x'):
        # The null path drops at W itself: the cost of generator and veth alone.
        ns, i = {'w': (bed.ns_n, bed.if_w), 'x': (bed.ns_x, bed.if_x),
                 'y': (bed.ns_y, bed.if_y)}['w' if path == 'null' else where]
        p = self.procs.start(bed.ns(ns, self.tool('fpsink'), '--iface', i,
                                    '--warmup', str(warmup), '--seconds', str(seconds),
                                    '--json'))
        line = p.stdout.readline()
        if line.strip() != 'ready':
            out, err = self.procs.stop(p)
            raise RuntimeError('fpsink did not start: %s' % err.strip()[-300:])
        return p

    def sink_result_now(self, p):
        return self.sink_result(p, 0.1)

    def sink_result(self, p, timeout):
        out, err = self.wait(p, timeout)
        lines = [l for l in out.strip().splitlines() if l.startswith('{')]
        if not lines:
            raise RuntimeError('fpsink gave no result: %s' % err.strip()[-300:])
        return json.loads(lines[-1])

    # ---- paths ----

    def path_up(self, bed, path, flows, layout, capacity=1048576, scen='S1'):
        """Start the path under test; returns a dict of handles for path_down()."""
        h = {'path': path}
        if path == 'null':
            return h
        if path == 'nft':
            run(bed.ns(bed.ns_n, 'sysctl', '-qw', 'net.ipv4.ip_forward=1'))
            if bed.family == 6:
                fpb6.forwarding(bed, run)
                rules = fpb6.nft_rules(bed, scen, HOSTPORT, SBX_PORT)
            elif scen == 'S3':
                # Egress: SNAT to the node address; conntrack reverses the replies.
                rules = ('table ip fpb {\n chain post {\n'
                         '  type nat hook postrouting priority 100;\n'
                         '  oifname "%s" ip saddr %s snat to %s\n }\n}\n' %
                         (bed.if_w, SBX_IP, NODE_IP))
            elif scen == 'S5':
                # Hairpin: DNAT to sandbox B and SNAT so that B answers through the node.
                rules = ('table ip fpb {\n chain pre {\n  type nat hook prerouting priority -100;\n'
                         '  ip daddr %s tcp dport %d dnat to %s:%d\n }\n'
                         ' chain post {\n  type nat hook postrouting priority 100;\n'
                         '  oifname "%s" snat to %s\n }\n}\n' %
                         (NODE_IP, HOSTPORT, SBX2_IP, SBX_PORT, bed.if_s2, NODE_SB2_IP))
            else:
                rules = ('table ip fpb {\n chain pre {\n  type nat hook prerouting priority -100;\n'
                         '  ip daddr %s tcp dport %d dnat to %s:%d\n'
                         '  ip daddr %s udp dport %d dnat to %s:%d\n }\n}\n' %
                         (NODE_IP, HOSTPORT, SBX_IP, SBX_PORT, NODE_IP, HOSTPORT, SBX_IP,
                          SBX_PORT))
            subprocess.run(bed.ns(bed.ns_n, 'nft', '-f', '-'), input=rules, text=True,
                           check=True)
            return h
        if path in ('tc', 'tc-ct', 'xdp', 'xdp-ct'):
            cmd = bed.ns(bed.ns_n, self.tool('fpdut'), '--iface', bed.if_w, '--mode',
                         path.split('-')[0], '--match', '%s:%d' % (NODE_IP, HOSTPORT), '--to',
                         '%s:%d' % (SBX_IP, SBX_PORT), '--out', bed.if_s, '--dst-mac',
                         bed.mac_x, '--seconds', '600', '--json')
            if path.endswith('-ct'):
                cmd += ['--sessions', '--max-sessions', str(capacity)]
            p = self.procs.start(cmd)
            if p.stdout.readline().strip() != 'ready':
                out, err = self.procs.stop(p)
                raise RuntimeError('fpdut did not start: %s' % err.strip()[-300:])
            h['proc'] = p
            return h
        if path == 'testpmd':
            cmd = bed.ns(bed.ns_n, 'sh', '-c',
                         'mount -t bpf bpf /sys/fs/bpf 2>/dev/null; '
                         'exec stdbuf -oL dpdk-testpmd -l 0-1 '
                         '--no-huge -m 1024 --no-pci --no-shconf --file-prefix %s '
                         '--log-level=pmd.net.af_xdp:warning '
                         '--vdev net_af_xdp0,iface=%s --vdev net_af_xdp1,iface=%s -- '
                         '--forward-mode=io --total-num-mbufs=32768 --nb-cores=1'
                         % (bed.prefix, bed.if_w, bed.if_s))
            h['log'] = os.path.join(self.tmp, 'testpmd-%s.log' % bed.tag)
            p = self.procs.start(cmd, logfile=h['log'], stdin=subprocess.PIPE)
            h['proc'] = p
            self.wait_log(p, h['log'], 'Press enter to exit', 'testpmd')
            return h
        if path in CUBEVS_PATHS:
            cmd = bed.ns(bed.ns_n, self.cubevs, '-l', '0-1', '--no-huge', '-m', '512',
                         '--no-shconf', '--no-pci', '--file-prefix', bed.prefix,
                         '--log-level=pmd.net.af_xdp:warning', '--',
                         '--world-iface', bed.if_w, '--guest-ip', SBX_IP,
                         *self.cubevs_state_opt(),
                         '--sandbox-cidr', SANDBOX_CIDR,
                         '--max-sessions', str(capacity),
                         *(fpb6.cubevs_args() if bed.family == 6 else ()))
            h['log'] = os.path.join(self.tmp, 'cubevs-%s.log' % bed.tag)
            p = self.procs.start(cmd, logfile=h['log'])
            h['proc'] = p
            self.wait_log(p, h['log'], 'ready:', 'cubevs-fp')
            bed.dport = self.register(bed, path, 'fpb', bed.if_s)
            if scen == 'S5':
                bed.dport2 = self.register(bed, path, 'fpb2', bed.if_s2)
            return h
        raise ValueError(path)

    def register(self, bed, path, name, iface):
        """A sandbox on the veth (AF_XDP) or on a vhost-user socket of ours; its host port."""
        port = {'iface': iface}
        if path == 'cubevs-vhost':
            port = {'vhostUser': {'socket': self.vsock(bed, name), 'mode': 'server'}}
        self.api(bed, 'PUT', '/sandboxes/' + name, dict(port, exposedPorts=[SBX_PORT]))
        ep = self.api(bed, 'GET', '/sandboxes/%s/exposed-ports/%d%s' % (
            name, SBX_PORT, '?family=ipv6' if bed.family == 6 else ''))
        return int(ep['hostPort'])

    def vsock(self, bed, name):
        return os.path.join(self.tmp, 'vh-%s-%s.sock' % (bed.tag, name))

    def guest(self, bed, socks, warmup, seconds, *opts):
        """fpvhost: the virtio_user guest(s) of cubevs-vhost; port i is socks[i]. It runs
        on CPU0 with the generator (CPU1 is the worker's)."""
        vdevs = []
        for k, name in enumerate(socks):
            vdevs += ['--vdev', 'net_virtio_user%d,path=%s,queue_size=%d' %
                      (k, self.vsock(bed, name), self.a.vhost_ring)]
        cmd = bed.ns(bed.ns_n, self.tool('fpvhost'), '-l', '0', '--no-huge', '-m', '256',
                     '--no-pci', '--no-shconf', '--file-prefix', bed.prefix + 'v', *vdevs,
                     '--', '--warmup', str(warmup), '--seconds', str(seconds), '--ring',
                     str(self.a.vhost_ring), *opts)
        p = self.procs.start(cmd)
        if p.stdout.readline().strip() != 'ready':
            out, err = self.procs.stop(p)
            raise RuntimeError('fpvhost did not start: %s' % err.strip()[-300:])
        return p

    def cubevs_state_opt(self):
        """Keep no registration state and no session region across runs."""
        if not hasattr(self, '_state_opt'):
            out = subprocess.run([self.cubevs, '--help'], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True).stdout
            self._state_opt = ['--state-file', 'none'] if '--state-file' in out else []
            # Nor sessions across runs (builds with a session region take 'none').
            if '--runtime-dir' in out:
                self._state_opt += ['--runtime-dir', 'none']
            # The generator's flows open with a SYN that no sink answers, then send ACKs:
            # window tracking rightly drops those (tcp_window). nft's conntrack picks the
            # ACK flows up loosely too (nf_conntrack_tcp_loose), so compare like with like.
            if '--tcp-liberal' in out:
                self._state_opt.append('--tcp-liberal')
        return self._state_opt

    def wait_log(self, p, logfile, word, what, timeout=20):
        t0 = time.time()
        while time.time() - t0 < timeout:
            with open(logfile) as f:
                text = f.read()
            if word in text:
                return
            if p.poll() is not None:
                raise RuntimeError('%s exited during start: %s' % (what, text.strip()[-400:]))
            time.sleep(0.05)
        raise RuntimeError('%s not ready after %d s' % (what, timeout))

    def api(self, bed, method, path, body=None):
        cmd = bed.ns(bed.ns_n, 'curl', '-s', '-m', '10', '-X', method, '-H',
                     'Content-Type: application/json', 'http://%s%s' % (API, path))
        if body is not None:
            cmd += ['-d', json.dumps(body)]
        out = run(cmd, timeout=20)
        return json.loads(out) if out.strip() else {}

    def sessions(self, bed, h):
        path = h['path']
        if path in CUBEVS_PATHS:
            st = self.api(bed, 'GET', '/stats')
            return fpb6.sessions(st) if bed.family == 6 else st.get('sessions')
        if path == 'nft':
            out = run(bed.ns(bed.ns_n, 'conntrack', '-C'), check=False)
            return int(out.strip() or 0)
        return None

    def path_down(self, bed, h):
        info = {}
        p = h.get('proc')
        if h['path'] in CUBEVS_PATHS:
            try:
                st = self.api(bed, 'GET', '/stats')
                info = {'sessions': fpb6.sessions(st) if bed.family == 6 else
                        st.get('sessions'),
                        # frames_copied even at 0: a build without it shows '-'.
                        'worker': {k: v for k, v in st.get('worker', {}).items()
                                   if v or k == 'frames_copied'},
                        'drops': {k: v for k, v in st.get('drops', {}).items() if v},
                        'xdp': st.get('xdp'), 'vhost': st.get('vhost'),
                        'tsc_hz': st.get('tscHz') or st.get('tsc_hz')}
            except Exception as e:
                info = {'error': str(e)}
        if h['path'] == 'nft':
            info['sessions'] = self.sessions(bed, h)
        if p is not None:
            if h['path'] == 'testpmd':
                try:
                    p.stdin.write('\n')
                    p.stdin.flush()
                    p.stdin.close()
                except OSError:
                    pass
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    pass
            out, err = self.procs.stop(p)
            if h['path'].startswith(('tc', 'xdp')):
                lines = [l for l in out.splitlines() if l.startswith('{')]
                if lines:
                    info.update(json.loads(lines[-1]))
            if h['path'] == 'testpmd':
                with open(h['log']) as f:
                    info['tail'] = [l.strip() for l in f if 'TX-packets' in l][-2:]
        return info

    # ---- one trial ----

    def trial(self, scen, path, flows, layout, family=4):
        a = self.a
        bed = Bed(self.run_id)
        self.bed = bed
        res = {'scenario': scen, 'path': path, 'flows': flows, 'layout': layout}
        self.partial = path == 'cubevs-pcsum'
        try:
            bed.up(second_sandbox=(scen == 'S5'))
            if family == 6:
                res['family'] = bed.family = 6
                fpb6.up(bed, run)
            if layout == '2cpu' and path in KERNEL_PATHS:
                res['napi_threads'] = len(bed.napi_threaded(1))
            cap = self.a.s4_capacity if scen == 'S4' else 1048576
            if path == 'nft':
                self.sysctls.set('/proc/sys/net/netfilter/nf_conntrack_max',
                                 cap if scen == 'S4' else 2 * 1048576)
            h = self.path_up(bed, path, flows, layout, cap, scen)
            try:
                if scen == 'S1':
                    self.s1(bed, h, path, flows, res)
                elif scen == 'S2':
                    self.s2(bed, h, path, flows, res)
                elif scen in ('S3', 'S5'):
                    self.s35(bed, h, path, flows, res, scen)
                elif scen == 'S4':
                    self.s4(bed, h, path, cap, res)
                elif scen == 'S6':
                    self.s6(bed, h, path, flows, layout, res)
            finally:
                res['dut'] = self.path_down(bed, h)
        except Exception as e:
            res['error'] = str(e)
            log('%s %s flows=%d %s: %s' % (scen, path, flows, layout, e))
        finally:
            self.procs.stop_all()
            bed.down()
            self.bed = None
        return res

    def prepass(self, bed, h, path, flows, side='world', proto=None):
        """Create the sessions of every flow before measuring (bounded in time)."""
        if path in ('null', 'testpmd', 'tc', 'xdp'):
            return None
        proto = proto or ('syn' if path in CUBEVS_PATHS else 'ack')
        limit = time.time() + (6 if flows > 100000 else 3)
        got = None
        while time.time() < limit:
            self.gen(bed, proto, flows, max(flows * 2, 1000), 1.5 if flows > 100000 else 0.5,
                     side=side)
            got = self.sessions(bed, h)
            if got is None or got >= flows:
                break
        return got

    def s1(self, bed, h, path, flows, res):
        a = self.a
        res['sessions_before'] = self.prepass(bed, h, path, flows)
        if path == 'cubevs-vhost':
            # A pure sink: it sleeps 20 us whenever it has drained its ring (--vhost-ring),
            # leaving CPU0 to the generator.
            sink = self.guest(bed, ['fpb'], a.warmup, a.measure, '--idle-us', '20')
        else:
            sink = self.sink_start(bed, a.warmup, a.measure, path)
        g = self.gen(bed, 'ack', flows, 1 << 40, a.warmup + a.measure + 0.5)
        s = self.sink_result(sink, 30)
        res['offered_pps'] = g.get('pps', 0)
        res['pps'] = s['pps']
        res['sink'] = {k: s[k] for k in ('packets', 'window_s') if k in s}

    def s35(self, bed, h, path, flows, res, scen):
        """S3: guest UDP flows out through SNAT to a reflector behind the generator namespace,
        counted when they come back to the guest: every frame crosses the path twice (SNAT
        out, reverse SNAT in). S5: guest TCP to node IP : host port of sandbox B on the same
        node, counted at B (DNAT + SNAT in one pass)."""
        a = self.a
        if scen == 'S3':
            refl = self.procs.start(bed.ns(bed.ns_g, self.tool('fpdut'), '--iface', bed.if_g,
                                           '--mode', 'reflect', '--seconds', '600', '--json'))
            if refl.stdout.readline().strip() != 'ready':
                raise RuntimeError('reflector did not start')
            if self.a.reflector_cpu >= 0:
                # The reflector stands in for the internet: its work runs in a NAPI thread on
                # the generator's CPU instead of inline in whichever sendto() reached it
                # (GRO on gives the veth a NAPI to thread).
                run(bed.ns(bed.ns_g, 'ethtool', '-K', bed.if_g, 'gro', 'on'), check=False)
                res['reflector_napi'] = len(bed.napi_threaded(self.a.reflector_cpu, bed.ns_g,
                                                              bed.if_g))
            if path == 'cubevs-vhost':
                return self.s35_vhost(bed, flows, res, scen)
            res['sessions_before'] = self.prepass(bed, h, path, flows, side='sandbox',
                                                  proto='udp')
            sink = self.sink_start(bed, a.warmup, a.measure, where='x')
            g = self.gen(bed, 'udp', flows, 1 << 40, a.warmup + a.measure + 0.5, side='sandbox')
        elif path == 'cubevs-vhost':
            return self.s35_vhost(bed, flows, res, scen)
        else:
            res['sessions_before'] = self.prepass(bed, h, path, flows, side='hairpin')
            sink = self.sink_start(bed, a.warmup, a.measure, where='y')
            g = self.gen(bed, 'ack', flows, 1 << 40, a.warmup + a.measure + 0.5, side='hairpin')
        s = self.sink_result(sink, 30)
        res['offered_pps'] = g.get('pps', 0)
        res['pps'] = s['pps']
        res['sink'] = {k: s[k] for k in ('packets', 'window_s') if k in s}

    def s35_vhost(self, bed, flows, res, scen):
        """The guest is fpvhost: it sends from the vhost-user sandbox (port 0) and counts
        what comes back (S3, same port) or what reaches sandbox B (S5, port 1). Its first pass
        over the flows opens their sessions during the warm-up: no separate prepass."""
        a = self.a
        if scen == 'S3':
            socks, rx, proto, dst, dport = ['fpb'], '0', 'udp', REMOTE_IP, REMOTE_PORT
        else:
            socks, rx, proto, dst, dport = ['fpb', 'fpb2'], '1', 'ack', NODE_IP, bed.dport2
        g = self.guest(bed, socks, a.warmup, a.measure, '--tx-port', '0', '--rx-port', rx,
                       '--proto', proto, '--src', SBX_IP, '--sport', '1024', '--flows',
                       str(flows), '--dst', dst, '--dport', str(dport), '--dst-mac',
                       GW_MAC)
        out, err = self.wait(g, a.warmup + a.measure + 30)
        lines = [l for l in out.strip().splitlines() if l.startswith('{')]
        if not lines:
            raise RuntimeError('fpvhost gave no result: %s' % err.strip()[-300:])
        s = json.loads(lines[-1])
        res['offered_pps'] = s['sent'] / (a.warmup + a.measure)
        res['pps'] = s['pps']
        res['sink'] = {k: s[k] for k in ('packets', 'window_s', 'sent') if k in s}

    def created(self, bed, h):
        """Sessions created so far by the path, or None when it cannot say."""
        path = h['path']
        if path in CUBEVS_PATHS:
            return self.api(bed, 'GET', '/stats').get('worker', {}).get('sessions_created')
        if path == 'nft':
            return self.sessions(bed, h)
        return None

    def s2(self, bed, h, path, flows, res):
        """New-connection rate, RFC 9693 style: steps of unique SYNs paced at rising rates
        (tuples never repeat across steps); the rate of a step counts when its SYNs created
        sessions and reached the sandbox (at least --s2-min-created of them: on this shared VM
        a worker stall of ~20 ms loses a few hundred SYNs at any rate). tc-ct inserts on every
        miss, so its delivered SYNs are its created sessions."""
        a = self.a
        steps = []
        c0 = self.created(bed, h) or 0
        for k, rate in enumerate(a.s2_rates):
            n = int(rate * a.s2_step)
            sink = self.sink_start(bed, 0, a.s2_step * 3 + 5)
            # Distinct source ports per step (16 per address): no tuple is ever sent twice.
            g = self.gen(bed, 'syn', n, n, a.s2_step * 3 + 1, extra=('--paced', str(rate)),
                         sport=1024 + 16 * k)
            time.sleep(0.2)
            sk = self.sink_result_now(sink)
            c1 = self.created(bed, h)
            st = {'rate': rate, 'sent': g.get('sent', 0), 'achieved_pps': g.get('pps', 0),
                  'delivered': sk.get('total_packets', 0),
                  'created': None if c1 is None else c1 - c0}
            q = a.s2_min_created
            st['ok'] = bool(st['sent']) and st['delivered'] >= q * st['sent'] and \
                (st['created'] is None or st['created'] >= q * st['sent'])
            steps.append(st)
            c0 = c1 or 0
            if not st['ok']:
                break
        res['steps'] = steps
        ok = [st['achieved_pps'] for st in steps if st['ok']]
        res['max_lossless_pps'] = max(ok) if ok else 0
        res['created_total'] = sum(st['created'] or 0 for st in steps)

    def rss(self, h):
        try:
            with open('/proc/%d/status' % h['proc'].pid) as f:
                for line in f:
                    if line.startswith('VmRSS:'):
                        return int(line.split()[1]) * 1024
        except (OSError, KeyError):
            pass
        return None

    def s4(self, bed, h, path, cap, res):
        """Table scale: fill a table of 'cap' sessions with 1.2 x cap unique SYNs (paced, so
        the path keeps up) and see what the path does when full; bytes per session."""
        a = self.a
        n = int(cap * 1.2)
        res['capacity'] = cap
        rss0 = self.rss(h) if path == 'cubevs' else None
        sink = self.sink_start(bed, 0, n / a.s4_rate * 3 + 10)
        g = self.gen(bed, 'syn', n, n, n / a.s4_rate * 2 + 5, extra=('--paced', str(a.s4_rate)))
        time.sleep(0.3)
        sk = self.sink_result_now(sink)
        res['sent'] = g.get('sent', 0)
        res['delivered'] = sk.get('total_packets', 0)
        res['sessions'] = self.sessions(bed, h)
        if path == 'cubevs':
            st = self.api(bed, 'GET', '/stats')
            w, d = st.get('worker', {}), st.get('drops', {})
            res['created'] = w.get('sessions_created')
            res['evicted'] = w.get('sessions_evicted')
            res['refused'] = d.get('table_full')
            rss1 = self.rss(h)
            if rss0 and rss1 and res['sessions']:
                res['rss_bytes_per_session'] = (rss1 - rss0) / res['sessions']
            res['table_bytes_per_session'] = self.table_bytes
        elif path == 'nft':
            res['bytes_per_session'] = slab_objsize('nf_conntrack')
        elif path == 'tc-ct':
            out = run(['bpftool', '-j', 'map', 'show'], check=False)
            for m in json.loads(out or '[]'):
                if m.get('name') == 'dut_sess' and m.get('max_entries') == cap:
                    res['memlock_bytes_per_session'] = m.get('bytes_memlock', 0) / cap
        res['sink'] = sk.get('total_packets')

    def s6(self, bed, h, path, flows, layout, res):
        """Latency: stamped ACKs of established flows, paced at fractions of the path's S1 rate
        from this run; one-way latency from the sink's histogram, loss from the stamps."""
        a = self.a
        base = self.s1_rate(layout, flows, path)
        if not base:
            res['skipped'] = 'no S1 rate for this path in this run'
            return
        res['sessions_before'] = self.prepass(bed, h, path, flows)
        res['s1_pps'] = base
        res['points'] = []
        for frac in a.s6_fractions:
            rate = int(base * frac)
            # The sink outlives the sender, so every stamp sent can be counted.
            sink = self.sink_start(bed, 0, a.s6_seconds + 2, path)
            g = self.gen(bed, 'ack', flows, int(rate * a.s6_seconds), a.s6_seconds,
                         extra=('--paced', str(rate), '--size', '70'))
            time.sleep(0.2)
            sk = self.sink_result_now(sink)
            lat = sk.get('latency_ns', {})
            res['points'].append({'fraction': frac, 'rate': rate,
                                  'achieved_pps': g.get('pps', 0), 'sent': g.get('sent', 0),
                                  'received': sk.get('stamped_total', 0),
                                  'loss_pct': 100.0 * (1 - sk.get('stamped_total', 0) /
                                                       g['sent']) if g.get('sent') else None,
                                  'p50': lat.get('p50'), 'p99': lat.get('p99'),
                                  'p999': lat.get('p999'), 'max': lat.get('max')})

    def s1_rate(self, layout, flows, path):
        v = [r['pps'] for r in self.results if r['scenario'] == 'S1' and r.get('pps') and
             r.get('family', 4) == 4 and r['path'] == path and r['layout'] == layout and r['flows'] == flows]
        return statistics.median(v) if v else None

    # ---- the whole matrix ----

    def main(self):
        a = self.a
        results = self.results
        sysctl_nf = '/proc/sys/net/netfilter/nf_conntrack_max'
        if 'nft' in a.paths:
            if shutil.which('modprobe'):
                run(['modprobe', 'nf_conntrack'], check=False)
            # Room for the biggest flow count plus slack; restored at the end.
            self.sysctls.set(sysctl_nf, max(2 * max(a.flows), 262144))
            self.sysctls.set('/sys/module/nf_conntrack/parameters/hashsize',
                             max(max(a.flows) // 2, 65536))
        cells = []
        for scen in a.scenarios:
            for layout in a.layouts:
                for flows in (a.flows if scen == 'S1' else [a.s6_flows] if scen == 'S6'
                              else a.s35_flows if scen in ('S3', 'S5') else [0]):
                    for path in a.paths:
                        if layout == '1cpu' and path in DPDK_PATHS:
                            continue
                        if scen in ('S2', 'S4') and path in ('null', 'testpmd', 'tc', 'xdp'):
                            continue
                        if scen in ('S3', 'S5') and path not in ('nft',) + CUBEVS_PATHS:
                            continue
                        # fpvhost counts frames, not stamps or paced steps.
                        if scen in ('S2', 'S4', 'S6') and path == 'cubevs-vhost':
                            continue
                        # Each IPv6 trial right after its IPv4 twin: much the same load.
                        for fam in a.family:
                            if fam == 4 or fpb6.supported(scen, path):
                                cells.append((scen, path, flows, layout, fam))
        try:
            out = run([os.path.join(self.build, 'tools', 'bench', 'ppbench'), '--sessions',
                       '1024', '--json'])
            self.table_bytes = json.loads(out)['table_bytes_per_session']
        except Exception:
            pass
        t_start = time.time()
        for t in range(a.trials):
            for c in cells:
                r = self.trial(*c)
                r['trial'] = t
                results.append(r)
                if 'error' in r:
                    pass
                elif 'pps' in r:
                    log('%s %-8s %-4s flows=%-8d trial %d: %.3f Mpps (offered %.2f)%s' %
                        (c[0], c[1], c[3], c[2], t, r['pps'] / 1e6, r['offered_pps'] / 1e6,
                         ' IPv6' if c[4] == 6 else ''))
                elif 'steps' in r:
                    log('%s %-8s %-4s trial %d: max lossless %.0f new/s; steps %s' %
                        (c[0], c[1], c[3], t, r['max_lossless_pps'],
                         ' '.join('%d:%s/%s/%s' % (st['achieved_pps'], st['sent'],
                                                   st['created'], st['delivered'])
                                  for st in r['steps'])))
                elif 'capacity' in r:
                    log('%s %-8s trial %d: capacity %d, sent %d, sessions %s, delivered %s' %
                        (c[0], c[1], t, r['capacity'], r['sent'], r['sessions'],
                         r['delivered']))
                elif 'points' in r:
                    log('%s %-8s flows=%d trial %d: %s' % (c[0], c[1], c[2], t, ' '.join(
                        '%.0f%%:%.0fpps p50 %s p99 %s loss %.2f%%' % (
                            pt['fraction'] * 100, pt['achieved_pps'], pt['p50'], pt['p99'],
                            pt['loss_pct'] or 0) for pt in r['points'])))
        return results, time.time() - t_start


def summarize(results, a):
    """Median/min/max/spread per cell, ns per packet, ratios to nft and tc-ct."""
    cells = {}
    for r in results:
        if r['scenario'] not in ('S1', 'S3', 'S5') or 'pps' not in r:
            continue
        cells.setdefault((r['scenario'], r['layout'], r['flows'], r['path']), []).append(
            r['pps'])
    rows = []
    for (scen, layout, flows, path), v in sorted(cells.items(), key=lambda kv: (
            kv[0][0], kv[0][1], kv[0][2], ALL_PATHS.index(kv[0][3]))):
        med = statistics.median(v)
        rows.append({'scenario': scen, 'layout': layout, 'flows': flows, 'path': path,
                     'trials': len(v),
                     'mpps_median': med / 1e6, 'mpps_min': min(v) / 1e6,
                     'mpps_max': max(v) / 1e6,
                     'spread_pct': 100.0 * (max(v) - min(v)) / med if med else 0,
                     'ns_per_pkt': 1e9 / med if med else None})
    byk = {(r['scenario'], r['layout'], r['flows'], r['path']): r for r in rows}
    for r in rows:
        for base in ('nft', 'tc-ct', 'xdp', 'testpmd', 'null'):
            b = byk.get((r['scenario'], r['layout'], r['flows'], base))
            r['x_' + base.replace('-', '_')] = (r['mpps_median'] / b['mpps_median']
                                                if b and b['mpps_median'] else None)
        nul = byk.get((r['scenario'], r['layout'], r['flows'], 'null'))
        r['dut_ns_per_pkt'] = (r['ns_per_pkt'] - nul['ns_per_pkt']
                               if nul and r['ns_per_pkt'] and r['layout'] == '1cpu' else None)
    return rows


def slab_objsize(name):
    try:
        with open('/proc/slabinfo') as f:
            for line in f:
                if line.startswith(name + ' '):
                    return int(line.split()[3])
    except OSError:
        pass
    return None


def summarize_s4(results):
    rows = []
    for r in results:
        if r['scenario'] == 'S4' and 'capacity' in r:
            row = {k: r.get(k) for k in (
                'path', 'trial', 'capacity', 'sent', 'delivered', 'sessions', 'created',
                'evicted', 'refused', 'table_bytes_per_session', 'rss_bytes_per_session',
                'bytes_per_session', 'memlock_bytes_per_session')}
            if row['sessions'] is None:
                # tc-ct: fpdut counts its map when it stops.
                row['sessions'] = r.get('dut', {}).get('sessions')
                row['created'] = r.get('dut', {}).get('new')
                row['refused'] = r.get('dut', {}).get('full')
            rows.append(row)
    return rows


def summarize_s6(results):
    cells = {}
    for r in results:
        if r['scenario'] == 'S6' and r.get('points'):
            for pt in r['points']:
                cells.setdefault((r['layout'], r['flows'], r['path'], pt['fraction']),
                                 []).append(pt)
    rows = []
    for (layout, flows, path, frac), v in sorted(cells.items(), key=lambda kv: (
            kv[0][0], kv[0][1], ALL_PATHS.index(kv[0][2]), kv[0][3])):
        med = lambda k: statistics.median([p[k] for p in v if p.get(k) is not None] or [0])
        rows.append({'layout': layout, 'flows': flows, 'path': path, 'fraction': frac,
                     'trials': len(v), 'rate': med('rate'), 'achieved_pps': med('achieved_pps'),
                     'p50_ns': med('p50'), 'p99_ns': med('p99'), 'p999_ns': med('p999'),
                     'loss_pct': med('loss_pct')})
    return rows


def fmt(v, f='%.2f'):
    return '-' if v is None else f % v


def summarize_paired(results):
    """Ratios of the cubevs paths to nft and xdp within each trial, median over trials: the
    trials are interleaved, so on a shared machine a ratio of one trial compares paths measured
    seconds apart, under much the same load."""
    pps = {(r['scenario'], r['flows'], r['path'], r.get('trial')): r['pps']
           for r in results if r.get('pps')}
    cells = {}
    for (scen, flows, path, t), v in pps.items():
        if path not in CUBEVS_PATHS:
            continue
        for base in ('xdp', 'nft', 'cubevs'):
            b = pps.get((scen, flows, base, t))
            if b and base != path:
                cells.setdefault((scen, flows, path, base), []).append(v / b)
    return [{'scenario': k[0], 'flows': k[1], 'path': k[2], 'base': k[3], 'trials': len(v),
             'ratio_median': statistics.median(v), 'ratio_min': min(v), 'ratio_max': max(v)}
            for k, v in sorted(cells.items())]


def summarize_lcore(results):
    """Busy and pipeline TSC cycles of the worker per frame it received, in ns, and the frames
    it copied in user space per frame received (frames_copied: into the buffer of the port a
    frame leaves by, into an mbuf for another worker, into a parked slot, the vhost library's
    copies; docs/datapath.md, "Copies per path")."""
    cells = {}
    for r in results:
        w = r.get('dut', {}).get('worker') or {}
        hz = w.get('tsc_hz')
        rx = sum(v for k, v in w.items() if k.endswith('rx_packets'))
        if r['path'] not in CUBEVS_PATHS or not hz or not rx or not w.get('pipeline_packets'):
            continue
        cells.setdefault((r['scenario'], r['flows'], r['path']), []).append(
            (1e9 * w.get('busy_cycles', 0) / hz / rx,
             1e9 * w.get('pipeline_cycles', 0) / hz / w['pipeline_packets'],
             w['frames_copied'] / rx if 'frames_copied' in w else None))
    return [{'scenario': k[0], 'flows': k[1], 'path': k[2],
             'busy_ns': statistics.median(x[0] for x in v),
             'pipe_ns': statistics.median(x[1] for x in v),
             'copies': statistics.median(x[2] for x in v) if v[0][2] is not None else None}
            for k, v in sorted(cells.items())]


def print_table(rows, s2, s4=(), s6=(), out=sys.stdout, lcore=(), paired=()):
    titles = {
        'S1': 'S1 established-flow DNAT, world -> sandbox, 60-byte TCP ACKs (Mpps at the sink)',
        'S3': 'S3 SNAT round trip: guest UDP -> SNAT -> reflector -> reverse SNAT -> guest '
              '(each frame crosses the path twice; Mpps back at the guest)',
        'S5': 'S5 hairpin: sandbox A -> node IP : host port of sandbox B (DNAT + SNAT in one '
              'pass; Mpps at B)'}
    for scen in ('S1', 'S3', 'S5'):
        sr = [r for r in rows if r['scenario'] == scen]
        if not sr:
            continue
        out.write('\n%s\n' % titles[scen])
        out.write('| layout | flows | path | trials | Mpps median | min | max | spread | '
                  'ns/pkt | DUT ns/pkt | x nft | x tc-ct | x xdp | x testpmd |\n')
        out.write('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n')
        for r in sr:
            flag = ' (!)' if r['spread_pct'] > 10 else ''
            out.write('| %s | %d | %s | %d | %.3f | %.3f | %.3f | %.1f %%%s | %s | %s | %s | '
                      '%s | %s | %s |\n' % (
                          r['layout'], r['flows'], r['path'], r['trials'], r['mpps_median'],
                          r['mpps_min'], r['mpps_max'], r['spread_pct'], flag,
                          fmt(r['ns_per_pkt'], '%.0f'), fmt(r['dut_ns_per_pkt'], '%.0f'),
                          fmt(r['x_nft']), fmt(r['x_tc_ct']), fmt(r['x_xdp']),
                          fmt(r['x_testpmd'])))
    if paired:
        out.write('\nPaired ratios: cubevs path / base within each trial, median (min-max) '
                  'over trials\n| scenario | flows | path | base | trials | ratio |\n'
                  '|---|---|---|---|---|---|\n')
        for r in paired:
            out.write('| %s | %d | %s | %s | %d | %.2f (%.2f-%.2f) |\n' % (
                r['scenario'], r['flows'], r['path'], r['base'], r['trials'],
                r['ratio_median'], r['ratio_min'], r['ratio_max']))
    if lcore:
        out.write('\nWorker lcore per frame received (cubevs paths; counters of the whole trial, '
                  'medians over trials): pipeline = parse, conntrack, NAT, L2; the rest is I/O '
                  'and polling\n')
        out.write('| scenario | flows | path | busy ns/frame | pipeline ns/frame | I/O ns/frame | '
                  'pipeline share | user-space copies/frame |\n'
                  '|---|---|---|---|---|---|---|---|\n')
        for r in lcore:
            out.write('| %s | %d | %s | %.0f | %.0f | %.0f | %.0f %% | %s |\n' % (
                r['scenario'], r['flows'], r['path'], r['busy_ns'], r['pipe_ns'],
                r['busy_ns'] - r['pipe_ns'], 100.0 * r['pipe_ns'] / r['busy_ns'],
                fmt(r['copies'])))
    if s2:
        out.write('\nS2 new-connection rate: highest paced rate of unique SYNs at which every '
                  'SYN created a session and reached the sandbox (>= 98 % by default)\n')
        out.write('| layout | path | trials | new sessions/s median | min | max | spread | '
                  'first failing step |\n|---|---|---|---|---|---|---|---|\n')
        for r in s2:
            ff = r['first_failing_step']
            out.write('| %s | %s | %d | %.0f | %.0f | %.0f | %.1f %% | %s |\n' % (
                r['layout'], r['path'], r['trials'], r['rate'], r['min'], r['max'],
                r['spread_pct'], '-' if not ff else '%d/s: sent %d, created %s, delivered %d' %
                (ff['achieved_pps'], ff['sent'], ff['created'], ff['delivered'])))
    if s4:
        out.write('\nS4 table scale: 1.2 x capacity unique SYNs, paced\n')
        out.write('| path | trial | capacity | SYNs sent | delivered | sessions after | '
                  'created | evicted | refused | bytes per session |\n'
                  '|---|---|---|---|---|---|---|---|---|---|\n')
        for r in s4:
            if r.get('table_bytes_per_session'):
                b = '%.0f table (RSS growth %s)' % (r['table_bytes_per_session'],
                                                     fmt(r.get('rss_bytes_per_session'), '%.0f'))
            elif r.get('bytes_per_session'):
                b = '%d slab object + buckets' % r['bytes_per_session']
            elif r.get('memlock_bytes_per_session'):
                b = '%.0f memlock, preallocated' % r['memlock_bytes_per_session']
            else:
                b = '-'
            out.write('| %s | %d | %d | %d | %s | %s | %s | %s | %s | %s |\n' % (
                r['path'], r['trial'], r['capacity'], r['sent'], r['delivered'],
                r['sessions'], fmt(r['created'], '%d'), fmt(r['evicted'], '%d'),
                fmt(r['refused'], '%d'), b))
    if s6:
        out.write('\nS6 one-way latency, paced stamped ACKs at fractions of the S1 rate '
                  '(AF_PACKET sender: tops out near 0.4-0.6 Mpps here)\n')
        out.write('| layout | flows | path | load | target pps | achieved pps | p50 ns | '
                  'p99 ns | p99.9 ns | loss |\n|---|---|---|---|---|---|---|---|---|---|\n')
        for r in s6:
            out.write('| %s | %d | %s | %.0f %% | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f %% |\n'
                      % (r['layout'], r['flows'], r['path'], r['fraction'] * 100, r['rate'],
                         r['achieved_pps'], r['p50_ns'], r['p99_ns'], r['p999_ns'],
                         r['loss_pct']))


def summarize_s2(results):
    cells = {}
    for r in results:
        if r['scenario'] != 'S2' or 'steps' not in r:
            continue
        cells.setdefault((r['layout'], r['path']), []).append(r)
    rows = []
    for (layout, path), v in sorted(cells.items()):
        rates = [r['max_lossless_pps'] for r in v]
        med = statistics.median(rates)
        last = v[-1]['steps'][-1] if v[-1]['steps'] else {}
        rows.append({'layout': layout, 'path': path, 'trials': len(v), 'rate': med,
                     'min': min(rates), 'max': max(rates),
                     'spread_pct': 100.0 * (max(rates) - min(rates)) / med if med else 0,
                     'first_failing_step': None if last.get('ok', True) else last})
    return rows


def find_build():
    for d in (os.environ.get('FPB_BUILD'), os.path.join(REPO, 'build'),
              os.path.join(REPO, 'build-perf'), os.path.join(REPO, 'build-test')):
        if d and os.path.exists(os.path.join(d, 'tools', 'bench', 'fpgen')):
            return d
    return None


def check_env(a):
    if os.geteuid() != 0:
        sys.exit('fpbench: needs root (namespaces, XDP, AF_XDP)')
    need = ['ip', 'ethtool', 'curl']
    if 'nft' in a.paths:
        need += ['nft', 'conntrack']
    if 'testpmd' in a.paths:
        need.append('dpdk-testpmd')
    missing = [n for n in need if not shutil.which(n)]
    if missing:
        pk = {'nft': 'nftables', 'conntrack': 'conntrack', 'dpdk-testpmd': 'dpdk-dev',
              'ethtool': 'ethtool', 'curl': 'curl', 'ip': 'iproute2'}
        debs = sorted({pk[m] for m in missing})
        if a.install:
            log('installing %s' % ' '.join(debs))
            run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends'] + debs,
                timeout=600)
        else:
            sys.exit('fpbench: missing %s (apt-get install %s, or pass --install)' %
                     (' '.join(missing), ' '.join(debs)))
    if os.cpu_count() < 2:
        sys.exit('fpbench: the 2cpu layout needs two CPUs')


def report(a, results, secs):
    """The tables on stdout, and into --markdown and --json."""
    # The IPv4 tables are IPv4's only; IPv6 has its own against them.
    v6 = fpb6.summarize(results)
    results4 = [r for r in results if r.get('family', 4) == 4]
    rows = summarize(results4, a)
    s2 = summarize_s2(results4)
    s4 = summarize_s4(results4)
    s6 = summarize_s6(results4)
    lcore = summarize_lcore(results4)
    paired = summarize_paired(results4)
    lcore6 = fpb6.lcore_rows(lcore, summarize_lcore(
        [r for r in results if r.get('family', 4) == 6]))
    print_table(rows, s2, s4, s6, lcore=lcore, paired=paired)
    fpb6.print_table(v6, sys.stdout, fmt, lcore6)
    meta = {'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
            'kernel': os.uname().release, 'cpus': os.cpu_count(), 'seconds': round(secs, 1),
            'trials': a.trials, 'warmup_s': a.warmup, 'measure_s': a.measure,
            'loadavg': open('/proc/loadavg').read().split()[:3], 'family': a.family,
            'loadavg_start': a.loadavg_start}
    print('\nrun: %s, %d trials, %.0f s, load average at end %s (at start %s)' % (
        meta['date'], a.trials, secs, ' '.join(meta['loadavg']), ' '.join(a.loadavg_start)))
    if a.json:
        with open(a.json, 'w') as f:
            json.dump({'meta': meta, 'rates': rows, 'S2': s2, 'S4': s4, 'S6': s6,
                       'lcore': lcore, 'paired': paired, 'ipv6': v6, 'ipv6_lcore': lcore6,
                       'raw': results}, f, indent=1)
    if a.markdown:
        with open(a.markdown, 'w') as f:
            print_table(rows, s2, s4, s6, f, lcore, paired)
            fpb6.print_table(v6, f, fmt, lcore6)


def main():
    global VERBOSE, TAG
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--quick', action='store_true',
                    help='1 trial, flows 1 and 65536, short windows (under 3 minutes)')
    ap.add_argument('--build', default=None, help='meson build dir [build, build-perf]')
    ap.add_argument('--paths', default='null,nft,tc-ct,xdp,testpmd,cubevs,cubevs-vhost',
                    help='comma list of %s' % ','.join(ALL_PATHS))
    ap.add_argument('--flows', default='1,1024,65536,1048576')
    ap.add_argument('--layouts', default='2cpu', help='2cpu and/or 1cpu (kernel paths)')
    ap.add_argument('--scenarios', default='S1,S2,S3,S4,S5,S6')
    ap.add_argument('--s35-flows', default='1,1024', help='flows of S3 and S5')
    ap.add_argument('--trials', type=int, default=5)
    ap.add_argument('--warmup', type=float, default=1.5)
    ap.add_argument('--measure', type=float, default=4.0)
    ap.add_argument('--s2-rates', default='100000,200000,300000,400000,500000,600000',
                    help='paced SYN rates tried in order (the paced sender tops out near '
                    '0.6 Mpps here)')
    ap.add_argument('--s2-step', type=float, default=0.5, help='seconds per rate step')
    ap.add_argument('--s2-min-created', type=float, default=0.98,
                    help='share of SYNs of a step that must create a session')
    ap.add_argument('--s4-capacity', type=int, default=1048576)
    ap.add_argument('--s4-rate', type=int, default=250000, help='paced SYN rate for S4')
    ap.add_argument('--s6-flows', type=int, default=1024)
    ap.add_argument('--s6-fractions', default='0.1,0.5,0.9')
    ap.add_argument('--s6-seconds', type=float, default=2.0)
    ap.add_argument('--json', default=None, help='write all results here')
    ap.add_argument('--markdown', default=None, help='write the table here too')
    ap.add_argument('--install', action='store_true', help='apt-get missing tools')
    ap.add_argument('--vhost-ring', type=int, default=4096,
                    help='descriptors per virtio ring of the cubevs-vhost guest: room for the '
                    'sink to be descheduled (4096 hold ~2.7 ms at 1.5 Mpps)')
    ap.add_argument('--reflector-cpu', type=int, default=-1,
                    help='S3: run the reflector in a NAPI thread on this CPU [-1: inline, in '
                    'the softirq of the CPU that transmitted to it]')
    ap.add_argument('--family', default='4',
                    help='4, 6 or 4,6: IPv6 runs S1 and S3 on the null, nft and cubevs paths, '
                    'each trial after its IPv4 twin, with a table of IPv6/IPv4 ratios [4]')
    ap.add_argument('--tag', default=TAG,
                    help='prefix of namespace, interface and DPDK file-prefix names [fpb]')
    ap.add_argument('-v', '--verbose', action='store_true')
    a = ap.parse_args()
    VERBOSE = a.verbose
    if not a.tag.isalnum() or len(a.tag) > 4:
        sys.exit('fpbench: --tag is 1-4 letters or digits')
    TAG = a.tag
    if a.quick:
        a.trials = 1
        a.flows = '1,65536'
        a.warmup, a.measure = 1.0, 2.0
        a.s2_rates = '200000,400000,600000'
        a.s35_flows = '1024'
        a.s4_capacity = 65536
        a.s6_seconds = 1.0
        a.s6_flows = 65536
    a.paths = [p for p in a.paths.split(',') if p]
    for p in a.paths:
        if p not in ALL_PATHS:
            sys.exit('fpbench: unknown path %s' % p)
    a.flows = [int(x) for x in a.flows.split(',')]
    a.scenarios = a.scenarios.split(",")
    a.s2_rates = [int(x) for x in a.s2_rates.split(',')]
    a.s6_fractions = [float(x) for x in a.s6_fractions.split(',')]
    a.scenarios = [sc for sc in a.scenarios if sc in ('S1', 'S2', 'S3', 'S4', 'S5', 'S6')]
    a.s35_flows = [int(x) for x in a.s35_flows.split(',')]
    if max(a.s35_flows) > 30000:
        sys.exit('fpbench: S3/S5 flows come from one guest address and port range: <= 30000')
    if max(a.flows) > 1 << 20 or min(a.flows) < 1:
        sys.exit('fpbench: flows between 1 and 1048576')
    a.layouts = a.layouts.split(',')
    a.family = sorted({int(x) for x in a.family.split(',') if x in ('4', '6')})
    if not a.family:
        sys.exit('fpbench: --family is 4, 6 or 4,6')
    a.build = a.build or find_build()
    if not a.build:
        sys.exit('fpbench: no build with tools/bench/fpgen found (meson setup build && '
                 'ninja -C build), or pass --build')
    check_env(a)

    b = Bench(a)
    a.loadavg_start = open('/proc/loadavg').read().split()[:3]

    def on_signal(sig, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    try:
        results, secs = b.main()
    except KeyboardInterrupt:
        log('interrupted')
        results, secs = [], 0
    finally:
        b.procs.stop_all()
        if b.bed:
            b.bed.down()
        b.sysctls.restore()
        shutil.rmtree(b.tmp, ignore_errors=True)
    report(a, results, secs)
    errors = [r for r in results if 'error' in r]
    return 1 if errors and len(errors) == len(results) else 0


if __name__ == '__main__':
    sys.exit(main())
