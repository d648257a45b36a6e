#!/usr/bin/env python3
"""Registration latency through the real HTTP API (issue 20), for regbench.sh.

fill API FROM TO THREADS: register idle sandboxes i<FROM>..i<TO> on interfaces c<i> with one
  exposed port; prints {"registered": n, "seconds": s, "errors": [...]}.
seq API SPARES ROUNDS: ROUNDS times PUT then DELETE a sandbox on one of the interfaces
  m1..m<SPARES> (in turn, so an interface is used again only after the others);
conc API SPARES SECONDS CLIENTS: the same from CLIENTS threads for SECONDS, each on its own
  spares. Both print {"PUT": {"n", "p50", "p99", "max"}, "DELETE": {...}, "errors": n} in ms.
"""
import http.client, json, sys, threading, time


def conn_of(api):
    host, port = api.split(":")
    return http.client.HTTPConnection(host, int(port), timeout=60)


def call(c, method, path, body=None):
    t = time.perf_counter()
    c.request(method, path, json.dumps(body) if body is not None else None,
              {"Content-Type": "application/json"} if body is not None else {})
    r = c.getresponse()
    r.read()
    return r.status, (time.perf_counter() - t) * 1e3


def stats(v):
    v = sorted(v)
    if not v:
        return None
    return {"n": len(v), "p50": round(v[len(v) // 2], 3),
            "p99": round(v[min(len(v) - 1, int(len(v) * .99))], 3), "max": round(v[-1], 3)}


def fill(api, lo, hi, threads):
    errs, lock = [], threading.Lock()
    t0 = time.monotonic()

    def run(k):
        c = conn_of(api)
        for i in range(lo + k, hi + 1, threads):
            st, _ = call(c, "PUT", "/sandboxes/i%d" % i, {"iface": "c%d" % i,
                                                          "exposedPorts": [8080]})
            if st != 201:
                with lock:
                    errs.append([i, st])

    ts = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    print(json.dumps({"registered": hi - lo + 1 - len(errs),
                      "seconds": round(time.monotonic() - t0, 2), "errors": errs[:5]}))


def cycles(api, spares, until, out, errs, lock):
    c = conn_of(api)
    k = 0
    while until():
        m = spares[k % len(spares)]
        k += 1
        st, ms = call(c, "PUT", "/sandboxes/bench-%s" % m, {"iface": m, "exposedPorts": [80]})
        ok = st == 201
        st2, ms2 = call(c, "DELETE", "/sandboxes/bench-%s" % m) if ok else (0, 0)
        with lock:
            if ok:
                out["PUT"].append(ms)
            if st2 == 204:
                out["DELETE"].append(ms2)
            if not ok or st2 != 204:
                errs.append(st if not ok else st2)


def report(out, errs):
    print(json.dumps({"PUT": stats(out["PUT"]), "DELETE": stats(out["DELETE"]),
                      "errors": len(errs)}))


def seq(api, nspares, rounds):
    out, errs, lock, left = {"PUT": [], "DELETE": []}, [], threading.Lock(), [rounds]

    def until():
        left[0] -= 1
        return left[0] >= 0

    cycles(api, ["m%d" % i for i in range(1, nspares + 1)], until, out, errs, lock)
    report(out, errs)


def conc(api, nspares, seconds, clients):
    out, errs, lock = {"PUT": [], "DELETE": []}, [], threading.Lock()
    stop = time.monotonic() + seconds
    ts = [threading.Thread(target=cycles, args=(
        api, ["m%d" % i for i in range(1, nspares + 1) if i % clients == k],
        lambda: time.monotonic() < stop, out, errs, lock)) for k in range(clients)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    report(out, errs)


mode, api = sys.argv[1], sys.argv[2]
if mode == "fill":
    fill(api, int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
elif mode == "seq":
    seq(api, int(sys.argv[3]), int(sys.argv[4]))
else:
    conc(api, int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))
