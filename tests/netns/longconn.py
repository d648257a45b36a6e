#!/usr/bin/env python3
"""Long-lived flows for the restart tests: each exchanges a message every 50 ms until told to stop.

longconn.py DIR [--period MS] [--tcp [LABEL@]HOST:PORT:N]... [--udp [LABEL@]HOST:PORT:N]...

Each flow exchanges a message every MS ms (50; tools/bench/restartbench.sh uses 1 or 2 to
time the gap). TCP flows talk to a line echo server and must get back every line they send, in order, on the
same connection; a reset, an end of stream, a wrong echo or 30 s without an answer breaks
them. UDP flows talk to sbxserver.py's UDP echo, which appends the source address it saw: it
must stay the same (the SNAT port survived). DIR/mark holds a number the test bumps after each
restart; a flow must have exchanged a message after the last mark. DIR/ready appears once every
flow has exchanged one, and DIR/caught holds the last mark every flow has exchanged a message
after (flows.sh waits for it: a TCP flow's next retransmission after a restart of a few
seconds can come that much later again, past any fixed wait); creating DIR/stop ends the run and prints one JSON summary: per flow
its label, whether it is intact (and why not), its messages and the longest wait between two
answers (the stall a restart caused; printed, not judged).
"""
import json
import os
import socket
import sys
import threading
import time

PERIOD = 0.05


def mark(d):
    try:
        with open(os.path.join(d, 'mark')) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


class Flow:
    def __init__(self, d, kind, label, host, port, idx):
        self.d, self.kind, self.host, self.port, self.idx = d, kind, host, port, idx
        self.label = label or kind
        self.msgs = 0
        self.last_mark = -1
        self.broken = None
        self.peers = set()
        self.last = None
        self.stall = 0.0    # longest wait between two answers: the restart as the flow saw it

    def name(self):
        return '%s %s %s:%d #%d' % (self.label, self.kind, self.host, self.port, self.idx)

    def answered(self, m):
        t = time.time()
        if self.last is not None:
            self.stall = max(self.stall, t - self.last)
        self.last = t
        self.msgs += 1
        self.last_mark = max(self.last_mark, m)

    def stopped(self):
        return os.path.exists(os.path.join(self.d, 'stop'))

    def run_tcp(self):
        s = socket.create_connection((self.host, self.port), timeout=10)
        s.settimeout(30)
        f = s.makefile('rb')
        seq = 0
        while not self.stopped():
            m = mark(self.d)
            line = b'%d-%d\n' % (self.idx, seq)
            s.sendall(line)
            got = f.readline()
            if got != line:
                raise RuntimeError('echo %r for %r' % (got[:40], line))
            self.answered(m)
            seq += 1
            time.sleep(PERIOD)
        s.close()

    def run_udp(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect((self.host, self.port))
        s.settimeout(PERIOD)
        seq = 0
        while not self.stopped():
            m = mark(self.d)
            msg = b'%d-%d' % (self.idx, seq)
            s.send(msg)
            t0 = time.time()
            while time.time() - t0 < PERIOD:
                try:
                    got = s.recv(2048).split()
                except socket.timeout:
                    break
                except ConnectionRefusedError:
                    continue
                if len(got) == 3 and got[0].startswith(b'%d-' % self.idx):
                    self.peers.add(b' '.join(got[1:]).decode())
                    self.answered(m)
            seq += 1
            time.sleep(PERIOD)

    def run(self):
        try:
            self.run_tcp() if self.kind == 'tcp' else self.run_udp()
        except Exception as e:  # a broken flow is the result, not a crash of the tool
            self.broken = '%s: %s' % (type(e).__name__, e)


def main():
    d = sys.argv[1]
    flows = []
    args = sys.argv[2:]
    global PERIOD
    for opt, spec in zip(args[::2], args[1::2]):
        if opt == '--period':
            PERIOD = float(spec) / 1000
            continue
        label, _, spec = spec.rpartition('@')
        host, port, n = spec.rsplit(':', 2)
        for i in range(int(n)):
            flows.append(Flow(d, opt.lstrip('-'), label, host, int(port), len(flows)))
    threads = [threading.Thread(target=f.run, daemon=True) for f in flows]
    for t in threads:
        t.start()
    deadline = time.time() + 20
    while time.time() < deadline and not all(f.msgs or f.broken for f in flows):
        time.sleep(0.05)
    open(os.path.join(d, 'ready'), 'w').close()
    caught = 0
    while any(t.is_alive() for t in threads):
        m = mark(d)
        if m > caught and all(f.last_mark >= m for f in flows):
            caught = m
            with open(os.path.join(d, 'caught.new'), 'w') as out:
                out.write('%d\n' % m)
            os.rename(os.path.join(d, 'caught.new'), os.path.join(d, 'caught'))
        time.sleep(0.05)
    for t in threads:
        t.join()
    last = mark(d)
    out = []
    for f in flows:
        why = None
        if f.broken:
            why = 'broken: %s' % f.broken
        elif f.last_mark < last:
            why = 'nothing exchanged after mark %d' % last
        elif f.kind == 'udp' and len(f.peers) != 1:
            why = 'seen from %s' % sorted(f.peers)
        out.append({'name': f.name(), 'label': f.label, 'ok': why is None, 'why': why,
                    'msgs': f.msgs, 'stall_ms': int(f.stall * 1000)})
    stalls = sorted(f.stall for f in flows)
    print(json.dumps({'flows': out, 'ok': sum(o['ok'] for o in out),
                      'stall_ms_median': int(stalls[len(stalls) // 2] * 1000),
                      'stall_ms_max': int(stalls[-1] * 1000)}))

if __name__ == '__main__':
    main()
