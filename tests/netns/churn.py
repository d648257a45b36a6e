#!/usr/bin/env python3
"""Registration load for test_journal.sh, through the real HTTP API.

churn API SECONDS CLIENTS IFACES OUT: CLIENTS threads, each owning its share of the
  interfaces c1..cIFACES, register, re-register with other ports and delete their sandboxes
  for SECONDS. Every answer is checked; OUT gets {"acked": {id: registration}, "bad": [...],
  "ops": n, "lat_ms": {...}}: what the last acknowledged answer for each id says.
burst API CLIENTS FIRST LAST DELETE_IDS ACKLOG: CLIENTS threads register b<FIRST>..b<LAST> on
  c<i> and delete the ids in DELETE_IDS (comma separated) as fast as the API answers; every
  201/204 is appended to ACKLOG (one JSON line, flushed) as soon as it arrives. Meant to be cut
  short by a kill -9 of cubevs-fp: errors after that are expected and not counted.
"""
import http.client, json, os, random, signal, sys, threading, time


def call(conn, method, path, body=None):
    hdr = {"Content-Type": "application/json"} if body is not None else {}
    t = time.perf_counter()
    conn.request(method, path, json.dumps(body) if body is not None else None, hdr)
    r = conn.getresponse()
    data = r.read()
    return r.status, (json.loads(data) if data else None), (time.perf_counter() - t) * 1e3


def connect(api):
    host, port = api.split(":")
    return http.client.HTTPConnection(host, int(port), timeout=30)


def churn(api, seconds, clients, ifaces, out):
    acked, bad, lat, lock = {}, [], {"PUT": [], "DELETE": []}, threading.Lock()
    stop = time.monotonic() + seconds
    barrier = threading.Barrier(clients)

    def client(k):
        rnd = random.Random(k)
        mine = [i for i in range(1, ifaces + 1) if i % clients == k]
        live, gen = {}, {}
        conn = connect(api)
        barrier.wait()
        while time.monotonic() < stop:
            i = rnd.choice(mine)
            # A new id per life of an interface: ids come and go, as sandboxes do.
            sid = "k%d-%d" % (i, gen.get(i, 0))
            if i in live and rnd.random() < 0.5:
                st, body, ms = call(conn, "DELETE", "/sandboxes/" + sid)
                ok = st == 204
                if ok:
                    del live[i]
                    gen[i] = gen.get(i, 0) + 1
                    with lock:
                        acked.pop(sid, None)
                method = "DELETE"
            else:
                ports = sorted(rnd.sample([80, 443, 8080, 9090, 22], rnd.randint(0, 3)))
                st, body, ms = call(conn, "PUT", "/sandboxes/" + sid,
                                    {"iface": "c%d" % i, "exposedPorts": ports})
                ok = st == (200 if i in live else 201)
                if ok:
                    live[i] = True
                    with lock:
                        acked[sid] = body
                method = "PUT"
            with lock:
                lat[method].append(ms)
                if not ok:
                    bad.append([method, sid, st, body])

    ts = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    summary = {}
    for m, v in lat.items():
        v.sort()
        if v:
            summary[m] = {"n": len(v), "p50": v[len(v) // 2], "p99": v[int(len(v) * .99)],
                          "max": v[-1]}
    json.dump({"acked": acked, "bad": bad, "ops": sum(len(v) for v in lat.values()),
               "lat_ms": summary}, open(out, "w"))


def burst(api, clients, first, last, delete_ids, acklog, kill_at=0, kill_pid=0):
    """kill_at > 0: SIGKILL kill_pid right after the kill_at-th acknowledgement, from here:
    a shell loop polling the log lets a whole burst through on a loaded machine."""
    todo = [("PUT", "b%d" % i, {"iface": "c%d" % i, "exposedPorts": [80, 8080]})
            for i in range(first, last + 1)]
    todo += [("DELETE", sid, None) for sid in delete_ids if sid]
    random.Random(1).shuffle(todo)
    lock = threading.Lock()
    log = open(acklog, "a")
    acked = [0]

    def client(k):
        conn = connect(api)
        for method, sid, body in todo[k::clients]:
            try:
                st, ans, _ = call(conn, method, "/sandboxes/" + sid, body)
            except Exception:
                return  # the process is gone: the rest is never acknowledged
            if st in (201, 204):
                with lock:
                    log.write(json.dumps({"op": method, "id": sid, "status": st,
                                          "body": ans}) + "\n")
                    log.flush()
                    acked[0] += 1
                    if acked[0] == kill_at:
                        os.kill(kill_pid, signal.SIGKILL)

    ts = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    [t.start() for t in ts]
    [t.join() for t in ts]


if sys.argv[1] == "churn":
    churn(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
else:
    burst(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]),
          sys.argv[6].split(","), sys.argv[7],
          *(int(a) for a in sys.argv[8:10]))
