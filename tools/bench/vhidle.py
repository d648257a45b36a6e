#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""vhidle: what idle vhost-user ports cost cubevs-fp's worker, per loop and in memory.

On fpbench's namespace bed (tools/bench/fpbench.py), cubevs-fp runs with its worker busy
polling on CPU1 and no traffic. For each count N of registered vhost-user sandboxes (no VMM),
then with K of them connected to fpvhost's idle virtio_user devices (a running device whose
guest sends nothing), it reads the worker's loop counter over short windows and the process's
RSS. The loop time of a window is the worker thread's on-CPU time in it (schedstat) over the
loops it made; the minimum over the windows is the estimate, the median is printed beside it
(this machine is shared: neighbours' cache and memory traffic still lengthen loops).

Usage: vhidle.py [--build DIR] [--ports 0,16,64,256] [--devices 16] [--windows 12]
"""
import argparse
import os
import shutil
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fpbench  # noqa: E402


def rss_mib(pid):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024.0
    return None


def worker_tid(pid):
    """The worker lcore's thread: DPDK names it lcore-worker-N (rte-worker-N in newer)."""
    for tid in os.listdir('/proc/%d/task' % pid):
        with open('/proc/%d/task/%s/comm' % (pid, tid)) as f:
            if 'worker' in f.read():
                return int(tid)
    raise RuntimeError('no worker thread in cubevs-fp')


def oncpu_ns(pid, tid):
    with open('/proc/%d/task/%d/schedstat' % (pid, tid)) as f:
        return int(f.read().split()[0])


def loop_ns(b, bed, pid, windows, secs):
    """Minimum and median on-CPU ns per worker loop over 'windows' windows of 'secs'. The
    worker's own CPU time (schedstat), not the wall clock: on this shared machine other
    processes take CPU1 for a share that changes from window to window."""
    tid = worker_tid(pid)
    v = []
    for _ in range(windows):
        l0, c0 = b.api(bed, 'GET', '/stats')['worker']['loops'], oncpu_ns(pid, tid)
        time.sleep(secs)
        l1, c1 = b.api(bed, 'GET', '/stats')['worker']['loops'], oncpu_ns(pid, tid)
        if l1 > l0:
            v.append((c1 - c0) / (l1 - l0))
    return min(v), statistics.median(v)


def measure(b, bed, h, a, what, n, rows, devices=0):
    time.sleep(0.5)
    lo, med = loop_ns(b, bed, h['proc'].pid, a.windows, a.window_s)
    rows.append({'what': what, 'ports': n, 'devices': devices, 'ns_min': lo, 'ns_median': med,
                 'rss_mib': rss_mib(h['proc'].pid)})
    fpbench.log('%-28s ports=%-4d loop %.1f ns (median %.1f), RSS %.1f MiB' % (
        what, n, lo, med, rows[-1]['rss_mib']))


def run(a):
    b = fpbench.Bench(a)
    bed = fpbench.Bed(b.run_id)
    b.bed = bed
    rows = []
    try:
        bed.up()
        # The path's one sandbox ('fpb') is a vhost-user port: start from none.
        h = b.path_up(bed, 'cubevs-vhost', 1, '2cpu', capacity=65536)
        b.api(bed, 'DELETE', '/sandboxes/fpb')
        have = 0
        for n in a.ports:
            for i in range(have, n):
                b.api(bed, 'PUT', '/sandboxes/i%d' % i, {'vhostUser': {
                    'socket': b.vsock(bed, 'i%d' % i), 'mode': 'server'}})
            have = max(have, n)
            measure(b, bed, h, a, 'registered, no VMM', n, rows)
        if a.devices and have:
            k = min(a.devices, have)
            g = b.guest(bed, ['i%d' % i for i in range(k)], 0, 60, '--idle-us', '1000')
            measure(b, bed, h, a, '%d with an idle device' % k, have, rows, k)
            b.procs.stop(g)
            st = b.api(bed, 'GET', '/stats').get('vhost', {})
            fpbench.log('vhost counters after the devices left: %s' % st)
            # Back to the row without devices: what differs is the devices, not the time.
            measure(b, bed, h, a, 'devices gone again', have, rows)
    finally:
        b.procs.stop_all()
        bed.down()
        shutil.rmtree(b.tmp, ignore_errors=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default=None)
    ap.add_argument('--ports', default='0,16,64,256')
    ap.add_argument('--devices', type=int, default=16,
                    help='idle virtio_user devices connected at the end (at most 31)')
    ap.add_argument('--windows', type=int, default=12)
    ap.add_argument('--window-s', type=float, default=0.25)
    ap.add_argument('--tag', default='fpb')
    a = ap.parse_args()
    a.ports = sorted(int(x) for x in a.ports.split(','))
    a.devices = min(a.devices, 31)
    a.vhost_ring = 256      # idle devices: small rings keep fpvhost within -m 256
    a.build = a.build or fpbench.find_build()
    if not a.build or os.geteuid() != 0:
        sys.exit('vhidle: needs root and a build (--build)')
    fpbench.TAG = a.tag
    rows = run(a)
    # Ports against no port; devices against the same ports without devices.
    print('| ports | what | ns per loop (min) | median | RSS MiB | ns per port or device | '
          'MiB per port or device |')
    print('|---|---|---|---|---|---|---|')
    for r in rows:
        per = per_m = None
        if r['devices']:
            base, k = next((x for x in rows if x['ports'] == r['ports'] and
                            x['what'].startswith('registered')), None), r['devices']
        else:
            base, k = next((x for x in rows if x['ports'] == 0), None), r['ports']
        if base and k and base is not r:
            per = (r['ns_min'] - base['ns_min']) / k
            per_m = (r['rss_mib'] - base['rss_mib']) / k
        print('| %d | %s | %.1f | %.1f | %.1f | %s | %s |' % (
            r['ports'], r['what'], r['ns_min'], r['ns_median'], r['rss_mib'],
            '-' if per is None else '%.2f' % per, '-' if per_m is None else '%.3f' % per_m))
    print('\nrun: %s, load average %s (shared machine)' % (
        time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
        ' '.join(open('/proc/loadavg').read().split()[:3])))


if __name__ == '__main__':
    main()
