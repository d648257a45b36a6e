#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scalereport: the table of a scalebench JSON file, the ratios to its N = 0 row, and a PNG
beside it (gnuplot): loop ns, busy sandbox RTT p50, memory per idle sandbox and PUT p99
against N. With --before, the picture draws both runs (before and after) and the table is
printed for each.

Usage: scalereport.py RUN.json [--before BEFORE.json] [--png FILE] [--markdown FILE]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile


def g(d, *path):
    for k in path:
        if not isinstance(d, dict) or d.get(k) is None:
            return None
        d = d[k]
    return d


def f(v, fmt='%.1f'):
    return '-' if v is None else fmt % v


def ratio(v, b):
    return None if v is None or not b else v / b


def table(run, name):
    rows = run['rows']
    base = next((r for r in rows if r['n'] == 0), None)
    ns = [r['n'] for r in rows]
    out = ['### %s: %s, %s cpus, load %s → %s, %.0f s%s' % (
        name, run['meta']['date'], run['meta']['cpus'],
        ' '.join(run['meta']['loadavg_start']), ' '.join(run['meta']['loadavg_end']),
        run['meta']['seconds'], ', ' + run['meta']['stopped'] if run['meta'].get('stopped')
        else ''),
        '', 'cubevs-fp options: `%s`%s' % (run['meta']['cubevs_fp_options'],
                                          '; idle sandboxes registered as CNI pods through '
                                          'cubevs-fp-cni (SCALE_CNI=1)'
                                          if run['meta'].get('env', {}).get('SCALE_CNI') == '1'
                                          else ''), '',
        '| | ' + ' | '.join('N = {:,}'.format(n) for n in ns) + ' |',
        '|---|' + '---|' * len(ns)]

    def line(label, fn):
        out.append('| %s | %s |' % (label, ' | '.join(fn(r) for r in rows)))

    def rat(path, r):
        v = ratio(g(r, *path), g(base, *path)) if base else None
        return '' if v is None or r is base else ' (%.2fx)' % v

    line('worker loop, wall clock (ns)', lambda r: f(g(r, 'loop', 'wall_ns'), '%.0f') +
         rat(('loop', 'wall_ns'), r))
    line('worker loop, on-CPU (ns)', lambda r: f(g(r, 'loop', 'cpu_ns'), '%.0f') +
         rat(('loop', 'cpu_ns'), r))
    line('busy sandbox TCP RTT p50 / p99 (us)', lambda r: '%s / %s%s' % (
        f(g(r, 'rtt', 'p50_us'), '%.0f'), f(g(r, 'rtt', 'p99_us'), '%.0f'),
        rat(('rtt', 'p50_us'), r)))
    line('S1 to the busy sandbox (Mpps)', lambda r: f(g(r, 's1', 'mpps'), '%.3f') +
         rat(('s1', 'mpps'), r))
    line('memory per idle sandbox: MemAvailable / RSS (KiB)', lambda r: '%s / %s' % (
        f(g(r, 'mem', 'per_sandbox_available_kib'), '%.0f'),
        f(g(r, 'mem', 'per_sandbox_rss_kib'), '%.0f')) if r['n'] else '')
    line('BPF maps and programs per idle sandbox (KiB memlock)', lambda r: f(
        g(r, 'mem', 'per_sandbox_bpf_kib'), '%.1f') if r['n'] else '')
    line('process RSS (MiB)', lambda r: f((g(r, 'mem', 'rss_kib') or 0) / 1024.0, '%.0f'))
    for key, label in (('put_seq', 'PUT'), ('del_seq', 'DELETE'), ('put_conc', 'PUT'),
                       ('del_conc', 'DELETE')):
        line('%s p50 / p99 / max (ms), %s' % (label, 'sequential' if key.endswith('seq') else
             '%s concurrent clients' % (g(rows[0], key, 'clients') or '?')),
             lambda r, k=key: '%s / %s / %s%s' % (
                 f(g(r, k, 'p50_ms')), f(g(r, k, 'p99_ms')), f(g(r, k, 'max_ms')),
                 '' if not g(r, k, 'errors') else ' (%s)' % ', '.join(
                     '%s: %s' % x for x in g(r, k, 'status').items())))
    line('journal flushes in those four: all / of 10 ms or more', lambda r: '%s / %s' % (
        f(g(r, 'api_syncs', 'syncs'), '%d'), f(g(r, 'api_syncs', 'slow'), '%d'))
        if g(r, 'api_syncs') else '-')
    line('registering the N (s, cumulative)', lambda r: '' if not r['n'] else f(
        sum(g(x, 'register', 'seconds') or 0 for x in rows if x['n'] <= r['n']), '%.1f'))
    for kind, label in (('term', 'SIGTERM'), ('kill', 'kill -9')):
        line('%s → /readyz 200 / all forwarding (ms)' % label, lambda r, k=kind: '%s / %s' % (
            f(g(r, 'restart', k, 'api_ready_ms'), '%d'),
            f(g(r, 'restart', k, 'forwarding_ms'), '%d')) if g(r, 'restart', k) else '-')
        line('%s: long-lived flows intact (longest stall)' % label,
             lambda r, k=kind: '%s / %s%s' % (
                 f(g(r, 'restart', k, 'flows_ok'), '%d'), f(g(r, 'restart', k, 'flows'), '%d'),
                 '' if g(r, 'restart', k, 'flows_stall_ms_max') is None else ' (%d ms)' %
                 g(r, 'restart', k, 'flows_stall_ms_max')) if g(r, 'restart', k) else '-')
    e = run.get('end') or {}
    out.append('')
    if e.get('n'):
        out.append('After deleting all %d: left per sandbox %s KiB of MemAvailable, %s KiB of RSS '
                   '(%s KiB against a fresh start), %s KiB of BPF memlock; DELETE of all p50 / p99 / max %s / %s / %s ms.' % (
                       e['n'], f(e.get('left_available_kib_per_sandbox'), '%.0f'),
                       f(e.get('left_rss_kib_per_sandbox'), '%.0f'),
                       f(e.get('left_rss_vs_fresh_kib_per_sandbox'), '%.0f'),
                       f(e.get('left_bpf_kib_per_sandbox'), '%.1f'),
                       f(g(e, 'delete_all', 'p50_ms')), f(g(e, 'delete_all', 'p99_ms')),
                       f(g(e, 'delete_all', 'max_ms'))))
    if base:
        top = rows[-1]
        out.append('Ratios N = {:,} / N = 0 (same run): loop {} (on-CPU {}), RTT p50 {}, '
                   'S1 {}.'.format(top['n'], *[f(ratio(g(top, *p), g(base, *p)), '%.2fx')
                                               for p in (('loop', 'wall_ns'), ('loop', 'cpu_ns'),
                                                         ('rtt', 'p50_us'), ('s1', 'mpps'))]))
    # The API goal is against a small node (N = 100), not an empty one.
    small = next((r for r in rows if r['n'] > 0), None)
    if small and small is not rows[-1]:
        top = rows[-1]
        out.append('PUT / DELETE p99 at N = {:,} against N = {:,}: sequential {} / {}, '
                   'concurrent {} / {}.'.format(
                       top['n'], small['n'], *[f(ratio(g(top, k, 'p99_ms'), g(small, k, 'p99_ms')),
                                                 '%.2fx')
                                               for k in ('put_seq', 'del_seq', 'put_conc',
                                                         'del_conc')]))
    return '\n'.join(out) + '\n'


def plot(runs, png):
    if not shutil.which('gnuplot'):
        sys.stderr.write('# no gnuplot (apt-get install gnuplot-nox): no picture\n')
        return False
    tmp = tempfile.mkdtemp(prefix='scalereport.')
    try:
        files = []
        for name, run in runs:
            p = os.path.join(tmp, name + '.dat')
            with open(p, 'w') as fh:
                fh.write('# n loop_ns rtt_p50_us mem_avail_kib mem_rss_kib put_p99_ms\n')
                for r in run['rows']:
                    # N = 0 sits at 1 on the logarithmic N axis.
                    fh.write('%d %s %s %s %s %s\n' % (
                        max(r['n'], 1), *[('NaN' if v is None else '%g' % v) for v in (
                            g(r, 'loop', 'wall_ns'), g(r, 'rtt', 'p50_us'),
                            g(r, 'mem', 'per_sandbox_available_kib') if r['n'] else None,
                            g(r, 'mem', 'per_sandbox_rss_kib') if r['n'] else None,
                            g(r, 'put_seq', 'p99_ms'))]))
            files.append((name, p))

        def series(col, extra=''):
            return ', '.join("'%s' using 1:%d with linespoints lw 2 title '%s%s'" % (
                p, col, name, extra) for name, p in files)
        script = '\n'.join([
            "set terminal pngcairo size 1200,900 font ',10'",
            "set output '%s'" % png,
            "set multiplot layout 2,2 title 'scalebench: N idle sandboxes beside one busy one "
            "(N = 0 drawn at 1)'",
            'set logscale x', 'set xlabel "idle sandboxes N"', 'set grid', 'set key top left',
            'set logscale y',
            "set title 'worker loop (ns, wall clock)'", 'plot ' + series(2),
            'unset logscale y',
            "set title 'busy sandbox TCP RTT p50 (us)'", 'plot ' + series(3),
            'set logscale y',
            "set title 'node memory per idle sandbox (KiB)'",
            'plot ' + series(4, ' MemAvailable') + ', ' + series(5, ' RSS'),
            "set title 'PUT p99, sequential (ms)'", 'plot ' + series(6),
            'unset multiplot', ''])
        r = subprocess.run(['gnuplot'], input=script, text=True, stderr=subprocess.PIPE)
        if r.returncode:
            sys.stderr.write('# gnuplot: %s\n' % r.stderr.strip()[-400:])
            return False
        return True
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('run')
    ap.add_argument('--before', help='an earlier run: drawn beside this one')
    ap.add_argument('--png', help='[RUN with .png for .json]')
    ap.add_argument('--markdown', help='write the tables here too')
    a = ap.parse_args()
    run = json.load(open(a.run))
    runs = [('after' if a.before else 'this run', run)]
    if a.before:
        runs.insert(0, ('before', json.load(open(a.before))))
    text = '\n'.join(table(r, n) for n, r in runs)
    print(text)
    if a.markdown:
        with open(a.markdown, 'w') as fh:
            fh.write(text)
    png = a.png or os.path.splitext(a.run)[0] + '.png'
    if plot(runs, png):
        print('picture: %s' % png)
    return 0


if __name__ == '__main__':
    sys.exit(main())
