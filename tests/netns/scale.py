#!/usr/bin/env python3
"""Helpers of the density test (test_scale.sh) and benchmark (tools/bench/scalebench): many
sandboxes through the API, the worker's loop time, a TCP round trip, node memory, and the wait
for every sandbox to forward after a restart.

Run in the node namespace (the API is on its loopback) unless said otherwise; a connection
from the client namespace is made by a thread that enters that namespace (setns acts on the
calling thread only). Every result is one JSON object on stdout. Every loop is bounded in
count and time.

  scale.py put FILE [--clients C] [--api A]     register every 'ID IFACE PORT' line of FILE
  scale.py delete FILE [--clients C] [--api A]  delete every ID of FILE
  scale.py loop --pid PID [--windows W] [--secs S]  ns per worker loop (wall and on-CPU)
  scale.py rtt HOST PORT [--count K] [--seconds T] [--size B]  round trips on one connection
                                                  (run where the client is)
  scale.py mem [--pid PID]                      MemAvailable, the process's RSS and the
                                                  memlock of its BPF maps and programs, KiB
  scale.py waitfwd --t0 NS --client-ns NS --sample HOST:PORT... [--timeout S]
        after a restart: ms from t0 (CLOCK_REALTIME ns) to /readyz 200, and to every
        sandbox attached (/readyz unattachedSandboxes 0) with a round trip through each
        HOST:PORT of the sample, made from the client namespace
  scale.py count                                sandboxes registered and attached
  scale.py cniadd|cnidel FILE --plugin P --socket S  ADD or DEL every 'ID IFACE PORT' line of
        FILE through the CNI plugin, as pods of their own (198.19.64.0/18) chained after ptp,
        the port mapped to host port 21000 + N (idleN)
"""
import argparse
import ctypes
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

API = '127.0.0.1:9180'
CLONE_NEWNET = 0x40000000


def enter_netns(name):
    """Move the calling thread into network namespace 'name' (ip netns)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open('/run/netns/' + name, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            e = ctypes.get_errno()
            raise OSError(e, 'setns(%s): %s' % (name, os.strerror(e)))
    finally:
        os.close(fd)


def pct(v, p):
    """The p-th percentile of v (nearest rank), None when v is empty."""
    if not v:
        return None
    s = sorted(v)
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def summary(ms):
    return {'n': len(ms), 'p50_ms': pct(ms, 50), 'p99_ms': pct(ms, 99),
            'max_ms': max(ms) if ms else None,
            'mean_ms': statistics.mean(ms) if ms else None}


class Api:
    """One keep-alive connection to the API (one per client thread)."""

    def __init__(self, api, timeout=120):
        self.host, port = api.split(':')
        self.port, self.timeout = int(port), timeout
        self.c = None

    def req(self, method, path, body=None):
        for attempt in (0, 1):
            try:
                if self.c is None:
                    self.c = http.client.HTTPConnection(self.host, self.port,
                                                        timeout=self.timeout)
                hdr = {'Content-Type': 'application/json'} if body is not None else {}
                self.c.request(method, path, None if body is None else json.dumps(body), hdr)
                r = self.c.getresponse()
                data = r.read()
                if r.getheader('Connection', '').lower() == 'close':
                    self.c.close()
                    self.c = None
                return r.status, json.loads(data) if data.strip() else None
            except (http.client.HTTPException, OSError):
                if self.c:
                    self.c.close()
                self.c = None
                if attempt:
                    raise
        return 0, None


def read_specs(path):
    out = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if p:
                out.append(p)
    return out


def many(a, what):
    """PUT or DELETE every sandbox of the file, from a.clients threads, each request timed."""
    specs = read_specs(a.file)
    lat, status, errors = [], {}, []
    lock = threading.Lock()
    nxt = [0]
    deadline = time.time() + a.max_seconds

    def client():
        api = Api(a.api)
        while time.time() < deadline:
            with lock:
                if nxt[0] >= len(specs):
                    return
                s = specs[nxt[0]]
                nxt[0] += 1
            t = time.monotonic()
            try:
                if what == 'put':
                    code, body = api.req('PUT', '/sandboxes/' + s[0],
                                         {'iface': s[1],
                                          'exposedPorts': [int(x) for x in s[2].split(',')]})
                else:
                    code, body = api.req('DELETE', '/sandboxes/' + s[0])
            except Exception as e:  # the result, not a crash of the tool
                code, body = 0, {'error': str(e)}
            ms = (time.monotonic() - t) * 1000
            with lock:
                lat.append(ms)
                status[code] = status.get(code, 0) + 1
                if code not in (200, 201, 204) and len(errors) < 5:
                    errors.append('%s %s: %s %s' % (what, s[0], code, body))

    t0 = time.monotonic()
    ts = [threading.Thread(target=client) for _ in range(a.clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    r = summary(lat)
    r.update({'op': what, 'clients': a.clients, 'total_s': time.monotonic() - t0,
              'status': {str(k): v for k, v in sorted(status.items())}, 'errors': errors,
              'done': len(lat), 'asked': len(specs)})
    print(json.dumps(r))
    return 0 if r['done'] == len(specs) and not errors else 1


def worker_tid(pid):
    for tid in os.listdir('/proc/%d/task' % pid):
        try:
            with open('/proc/%d/task/%s/comm' % (pid, tid)) as f:
                if 'worker' in f.read():
                    return int(tid)
        except OSError:
            pass
    return None


def oncpu_ns(pid, tid):
    try:
        with open('/proc/%d/task/%d/schedstat' % (pid, tid)) as f:
            return int(f.read().split()[0])
    except (OSError, TypeError):
        return None


def stats(api):
    code, body = api.req('GET', '/stats')
    if code != 200:
        raise RuntimeError('/stats: %s' % code)
    return body


def loop(a):
    """ns per worker loop over windows: wall clock over the loops counter's rise (what an
    operator sees), and the worker thread's on-CPU time over the same loops (what the loop
    costs when a shared CPU takes the thread away). Median and minimum of the windows."""
    api = Api(a.api)
    tid = worker_tid(a.pid) if a.pid else None
    wall, cpu = [], []
    for _ in range(a.windows):
        t0 = time.monotonic_ns()
        l0 = stats(api)['worker']['loops']
        c0 = oncpu_ns(a.pid, tid)
        time.sleep(a.secs)
        t1 = time.monotonic_ns()
        l1 = stats(api)['worker']['loops']
        c1 = oncpu_ns(a.pid, tid)
        if l1 > l0:
            wall.append((t1 - t0) / (l1 - l0))
            if c0 is not None and c1 is not None:
                cpu.append((c1 - c0) / (l1 - l0))
    print(json.dumps({'wall_ns': statistics.median(wall) if wall else None,
                      'wall_ns_min': min(wall) if wall else None,
                      'cpu_ns': statistics.median(cpu) if cpu else None,
                      'cpu_ns_min': min(cpu) if cpu else None,
                      'windows': len(wall), 'window_s': a.secs}))
    return 0


def rtt(a):
    """Small request/response round trips on one TCP connection to an echo server."""
    s = socket.create_connection((a.host, a.port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    msg = b'x' * (a.size - 1) + b'\n'
    us, lost = [], 0
    deadline = time.monotonic() + a.seconds
    for i in range(a.count + a.warmup):
        if time.monotonic() > deadline:
            break
        t = time.monotonic_ns()
        s.sendall(msg)
        got = b''
        try:
            while len(got) < len(msg):
                d = s.recv(len(msg) - len(got))
                if not d:
                    raise ConnectionError('end of stream')
                got += d
        except socket.timeout:
            lost += 1
            break
        if i >= a.warmup:
            us.append((time.monotonic_ns() - t) / 1000.0)
    s.close()
    print(json.dumps({'n': len(us), 'p50_us': pct(us, 50), 'p99_us': pct(us, 99),
                      'max_us': max(us) if us else None,
                      'mean_us': statistics.mean(us) if us else None, 'timeouts': lost}))
    return 0 if us else 1


def meminfo(keys=('MemAvailable',)):
    """Sum of the /proc/meminfo fields named, in KiB."""
    total, found = 0, False
    with open('/proc/meminfo') as f:
        for line in f:
            name, rest = line.split(':', 1)
            if name in keys:
                total += int(rest.split()[0])
                found = True
    return total if found else None


# The kernel's own memory that no reclaim gives back: where a registration's kernel side
# lives (a veth's XDP queues, map entries, sockets). Processes' heaps and the page cache,
# which other jobs on the machine move by hundreds of MiB, are not in it.
KERNEL_KEYS = ('SUnreclaim', 'Percpu', 'VmallocUsed')


def rss_kib(pid):
    try:
        with open('/proc/%d/status' % pid) as f:
            for line in f:
                if line.startswith('VmRSS:'):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def bpf_kib(pid):
    """memlock of the BPF maps and programs the process holds by fd (kernel memory that is
    the process's own, unlike MemAvailable), each counted once."""
    seen, total = set(), 0
    try:
        fds = os.listdir('/proc/%d/fdinfo' % pid)
    except OSError:
        return None
    for fd in fds:
        try:
            with open('/proc/%d/fdinfo/%s' % (pid, fd)) as f:
                info = dict(l.split(':', 1) for l in f.read().splitlines() if ':' in l)
        except OSError:
            continue
        key = ('map', info['map_id'].strip()) if 'map_id' in info else \
            ('prog', info['prog_id'].strip()) if 'prog_id' in info else None
        if key and key not in seen and 'memlock' in info:
            seen.add(key)
            total += int(info['memlock'].strip())
    return total // 1024


def mem(a):
    """Median of a few samples: other processes on the machine move MemAvailable."""
    av, kn, rs, bp = [], [], [], []
    for _ in range(a.samples):
        av.append(meminfo())
        kn.append(meminfo(KERNEL_KEYS))
        if a.pid:
            rs.append(rss_kib(a.pid))
            bp.append(bpf_kib(a.pid))
        time.sleep(0.2)
    rs = [x for x in rs if x is not None]
    bp = [x for x in bp if x is not None]
    print(json.dumps({'mem_available_kib': int(statistics.median(av)),
                      'kernel_kib': int(statistics.median(kn)),
                      'rss_kib': int(statistics.median(rs)) if rs else None,
                      'bpf_kib': int(statistics.median(bp)) if bp else None}))
    return 0


def echo_once(host, port, timeout=1.0):
    try:
        s = socket.create_connection((host, port), timeout=timeout)
        s.settimeout(timeout)
        s.sendall(b'ping\n')
        got = b''
        while len(got) < 5:
            d = s.recv(5 - len(got))
            if not d:
                break
            got += d
        s.close()
        return got == b'ping\n'
    except OSError:
        return False


def readyz(api):
    try:
        return api.req('GET', '/readyz')
    except Exception:
        return 0, None


def waitfwd(a):
    """From t0 (the kill or the stop, CLOCK_REALTIME ns): when /readyz first answers 200, and
    when every sandbox is attached and a round trip through each sample address works."""
    t0 = a.t0 / 1e9
    api = Api(a.api, timeout=2)
    res = {'api_ready_ms': None, 'forwarding_ms': None, 'unattached_last': None,
           'sample_ok': None}
    sample = [(h, int(p)) for h, p in (x.rsplit(':', 1) for x in a.sample)]
    box = {}

    def probe():
        try:
            enter_netns(a.client_ns)
            box['ok'] = [echo_once(h, p) for h, p in sample]
        except Exception as e:
            box['ok'] = []
            box['error'] = str(e)

    deadline = time.time() + a.timeout
    while time.time() < deadline:
        code, body = readyz(api)
        now = time.time()
        if code == 200 and res['api_ready_ms'] is None:
            res['api_ready_ms'] = int((now - t0) * 1000)
        if code == 200 and body is not None:
            res['unattached_last'] = body.get('unattachedSandboxes')
            res['sandboxes'] = body.get('sandboxes')
            if body.get('unattachedSandboxes') == 0:
                th = threading.Thread(target=probe)
                th.start()
                th.join()
                res['sample_ok'] = sum(box.get('ok', []))
                if box.get('error'):
                    res['error'] = box['error']
                if box.get('ok') and all(box['ok']):
                    res['forwarding_ms'] = int((time.time() - t0) * 1000)
                    break
        time.sleep(0.05)
    res['sample'] = len(sample)
    print(json.dumps(res))
    return 0 if res['forwarding_ms'] is not None else 1


def count(a):
    api = Api(a.api)
    code, body = api.req('GET', '/sandboxes')
    s = body.get('sandboxes', []) if body else []
    print(json.dumps({'status': code, 'sandboxes': len(s),
                      'attached': sum(1 for x in s if x.get('attached')),
                      'host_ports': len({p['hostPort'] for x in s
                                         for p in x.get('exposedPorts', [])}),
                      'ports': sum(len(x.get('exposedPorts', [])) for x in s)}))
    return 0


def if_mac(name):
    with open('/sys/class/net/%s/address' % name) as f:
        return f.read().strip()


def cni_one(a, op, i, spec):
    """One chained-plugin call for idle sandbox spec ('idleN ivN PORT'), as a runtime makes
    it after ptp: the pod is the veth's far end (ivNp) with an address of its own from
    198.19.64.0/18 behind 198.19.64.1, its port mapped to host port a.host_base + i."""
    host, pod = spec[1], spec[1] + 'p'
    conf = {'cniVersion': '1.0.0', 'name': a.net, 'type': 'cubevs-fp-cni',
            'apiSocket': a.socket,
            'prevResult': {'cniVersion': '1.0.0',
                           'interfaces': [{'name': host, 'mac': if_mac(host)},
                                          {'name': 'eth0', 'mac': if_mac(pod),
                                           'sandbox': '/var/run/netns/' + spec[0]}],
                           'ips': [{'address': '198.19.%d.%d/18' % (64 + i // 250, 2 + i % 250),
                                    'gateway': '198.19.64.1', 'interface': 1}]}}
    if op == 'ADD':
        conf['runtimeConfig'] = {'portMappings': [
            {'hostPort': a.host_base + i, 'containerPort': int(spec[2]), 'protocol': 'tcp'}]}
    env = dict(os.environ, CNI_COMMAND=op, CNI_CONTAINERID=spec[0], CNI_IFNAME='eth0',
               CNI_NETNS='/var/run/netns/' + spec[0], CNI_PATH='/usr/lib/cni')
    p = subprocess.run([a.plugin], input=json.dumps(conf).encode(), env=env,
                       capture_output=True, timeout=60)
    return p.returncode, p.stdout.decode(errors='replace')


def cni(a, op):
    """ADD or DEL every idle sandbox of the file through cubevs-fp-cni, one at a time, timed
    (the process the runtime runs included); the same summary as put and delete."""
    specs = read_specs(a.file)
    lat, errors, ok = [], [], 0
    t0 = time.monotonic()
    for s in specs:
        i = int(s[0].lstrip('idle') or 0)
        t = time.monotonic()
        rc, out = cni_one(a, op, i, s)
        lat.append((time.monotonic() - t) * 1000)
        ok += rc == 0
        if rc and len(errors) < 5:
            errors.append('%s %s: %s' % (op, s[0], out.strip()))
    r = summary(lat)
    r.update({'op': 'cni-' + op, 'clients': 1, 'total_s': time.monotonic() - t0,
              'status': {'ok': ok}, 'errors': errors, 'done': ok, 'asked': len(specs)})
    print(json.dumps(r))
    return 0 if ok == len(specs) else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--api', default=API)
    sub = ap.add_subparsers(dest='cmd', required=True)
    for name in ('put', 'delete'):
        p = sub.add_parser(name)
        p.add_argument('file')
        p.add_argument('--clients', type=int, default=1)
        p.add_argument('--max-seconds', type=float, default=900)
    p = sub.add_parser('loop')
    p.add_argument('--pid', type=int, default=0)
    p.add_argument('--windows', type=int, default=10)
    p.add_argument('--secs', type=float, default=0.3)
    p = sub.add_parser('rtt')
    p.add_argument('host')
    p.add_argument('port', type=int)
    p.add_argument('--count', type=int, default=5000)
    p.add_argument('--warmup', type=int, default=100)
    p.add_argument('--seconds', type=float, default=20)
    p.add_argument('--size', type=int, default=64)
    p = sub.add_parser('mem')
    p.add_argument('--pid', type=int, default=0)
    p.add_argument('--samples', type=int, default=5)
    p = sub.add_parser('waitfwd')
    p.add_argument('--t0', type=int, required=True)
    p.add_argument('--client-ns', required=True)
    p.add_argument('--sample', nargs='*', default=[])
    p.add_argument('--timeout', type=float, default=300)
    sub.add_parser('count')
    for name in ('cniadd', 'cnidel'):
        p = sub.add_parser(name)
        p.add_argument('file')
        p.add_argument('--plugin', required=True)
        p.add_argument('--socket', required=True)
        p.add_argument('--net', default='scalecni')
        p.add_argument('--host-base', type=int, default=21000)
    a = ap.parse_args()
    if a.cmd in ('cniadd', 'cnidel'):
        return cni(a, 'ADD' if a.cmd == 'cniadd' else 'DEL')
    if a.cmd in ('put', 'delete'):
        return many(a, a.cmd)
    return {'loop': loop, 'rtt': rtt, 'mem': mem, 'waitfwd': waitfwd, 'count': count}[a.cmd](a)


if __name__ == '__main__':
    sys.exit(main())
