#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Instructions per packet of the pipeline, counted by callgrind, against a committed budget.

Both address families: ppbench's IPv4 cases and, with --ipv6, the same cases over IPv6 (named
with _v6 behind), each against its own budget; the IPv6/IPv4 ratio of each case is printed.

The machine has no PMU and shared vCPUs, so time is noisy; instruction counts repeat to well
under 1 %. ppbench switches counting on only around the pipeline calls and dumps once per case.
A case fails when it costs more than its budget times (1 + tolerance). A case well under budget
is reported so the budget can be tightened (--update rewrites the file).

Exit 77 (skipped) when valgrind is missing or the build is not optimized or is sanitized:
the budget is for the default debugoptimized build.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile


def read_budget(path):
    budget = {}
    with open(path) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                name, value = line.split()
                budget[name] = float(value)
    return budget


def write_budget(path, measured):
    with open(path) as f:
        header = [l for l in f if l.startswith('#')]
    with open(path, 'w') as f:
        f.writelines(header)
        for name, value in measured.items():
            f.write('%s %d\n' % (name, round(value)))


def run_family(valgrind, a, extra):
    """ppbench under callgrind for one address family: instructions per packet by case."""
    tmp = tempfile.mkdtemp(prefix='cvs-cg.')
    try:
        out = os.path.join(tmp, 'cg.out')
        p = subprocess.run([valgrind, '--tool=callgrind', '--collect-atstart=no',
                            '--callgrind-out-file=' + out, a.ppbench,
                            '--sessions', str(a.sessions), '--rounds', '1', '--json'] + extra,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=300)
        if p.returncode != 0:
            sys.stderr.write(p.stderr)
            print('FAIL: ppbench %s under callgrind exited %d' % (' '.join(extra), p.returncode))
            return None
        res = json.loads(p.stdout)
        instr = {}
        for dump in glob.glob(out + '.*'):
            name = total = None
            with open(dump) as f:
                for line in f:
                    if line.startswith('desc: Trigger: Client Request: '):
                        name = line.split(': ')[-1].strip()
                    elif line.startswith('summary:'):
                        total = int(line.split()[1])
            if name and total is not None:
                instr[name] = total
    finally:
        shutil.rmtree(tmp)
    measured = {}
    for name, case in res['cases'].items():
        if name not in instr:
            print('FAIL: no callgrind dump for case %s' % name)
            return None
        measured[name] = instr[name] / case['packets']
    return measured, res


def print_families(measured):
    """Each IPv6 case (named as its IPv4 counterpart with _v6 behind) against IPv4."""
    rows = [(n[:-3], measured[n[:-3]], v) for n, v in measured.items()
            if n.endswith('_v6') and n[:-3] in measured]
    if not rows:
        return
    print('%-22s %10s %10s %8s' % ('IPv6 against IPv4', 'IPv4', 'IPv6', 'ratio'))
    for name, v4, v6 in rows:
        print('%-22s %10.1f %10.1f %8.3f' % (name, v4, v6, v6 / v4))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ppbench', required=True)
    ap.add_argument('--budget', required=True)
    ap.add_argument('--optimization', default='2')
    ap.add_argument('--sanitize', default='none')
    ap.add_argument('--tolerance', type=float, default=0.10)
    ap.add_argument('--sessions', type=int, default=16384)
    ap.add_argument('--update', action='store_true')
    a = ap.parse_args()

    valgrind = shutil.which('valgrind')
    if not valgrind:
        print('SKIP: valgrind not installed (tools/deps.sh installs it)')
        return 77
    if a.optimization not in ('2', '3') or a.sanitize not in ('none', ''):
        print('SKIP: budget is for -O2/-O3 builds without sanitizers (this one: -O%s, '
              'sanitize=%s)' % (a.optimization, a.sanitize))
        return 77

    measured, res = {}, None
    for family in ([], ['--ipv6']):
        got = run_family(valgrind, a, family)
        if got is None:
            return 1
        part, res4 = got
        measured.update(part)
        res = res or res4

    if a.update:
        write_budget(a.budget, measured)
        print('budget written to %s' % a.budget)
        return 0

    budget = read_budget(a.budget)
    fails = 0
    print('%-18s %10s %10s %8s' % ('case', 'instr/pkt', 'budget', 'ratio'))
    for name, value in measured.items():
        b = budget.get(name)
        if b is None:
            print('%-18s %10.1f %10s %8s  (no budget)' % (name, value, '-', '-'))
            continue
        ratio = value / b
        verdict = ''
        if ratio > 1 + a.tolerance:
            verdict = 'OVER BUDGET'
            fails += 1
        elif ratio < 1 - 2 * a.tolerance:
            verdict = 'well under budget: tighten it (--update)'
        print('%-18s %10.1f %10.0f %8.3f  %s' % (name, value, b, ratio, verdict))
    print_families(measured)
    print('tolerance %.0f %%, %d sessions; table %.1f B per session' %
          (a.tolerance * 100, a.sessions, res['table_bytes_per_session']))
    if fails:
        print('FAIL: %d case(s) over budget; if the extra work is intended, rerun with '
              '--update and commit tests/bench/ppbench_budget.txt' % fails)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
