#!/usr/bin/env python3
"""What the next start of cubevs-fp reads from a state file and its journal (PATH.journal),
printed as one state-file document: the snapshot with the journal's later records applied.
An implementation of its own, not cubevs-fp's code, so the tests check the format too.
Exits 1 on a journal it would refuse (bad header, a bad record before the last one, a sequence
out of order); a torn last record is left out, as cubevs-fp does, and named on stderr."""
import json, os, sys, zlib


def records(path, base):
    data = open(path, "rb").read()
    lines = data.split(b"\n")
    head = json.loads(lines[0])
    assert head.get("format") == "cubevs-fp-journal" and head.get("version") == 1, head
    last = head["base"]
    assert last <= base, "journal base %d after the snapshot's %d" % (last, base)
    body, tail = lines[1:-1], lines[-1]
    for i, line in enumerate(body):
        ok = line.endswith(b'"}') and line[-18:-10] == b',"crc":"'
        ok = ok and int(line[-10:-2], 16) == zlib.crc32(line[:-18])
        rec = json.loads(line) if ok else None
        if not ok or rec["seq"] != last + 1:
            rest = b"".join(body[i + 1:]) + tail
            if rest.strip(b"\0"):
                sys.exit("journal %s: line %d is corrupt and more follows" % (path, i + 2))
            print("stateview: torn last record left out", file=sys.stderr)
            return
        last = rec["seq"]
        yield rec
    if tail.strip(b"\0"):
        print("stateview: torn last record left out", file=sys.stderr)


def main(path):
    st = json.load(open(path)) if os.path.exists(path) else {"sandboxes": []}
    seq = st.get("journalSeq", 0)
    recs = {r["sandboxID"]: r for r in st["sandboxes"]}
    holds = {}
    for h in st.get("hostPortHolds", []):
        holds.setdefault(h["id"], []).append(h)
    if os.path.exists(path + ".journal"):
        for rec in records(path + ".journal", seq):
            if rec["seq"] <= seq:
                continue
            sid = rec["sandbox"]["sandboxID"] if rec["op"] == "put" else rec["sandboxID"]
            if rec["op"] == "put":
                recs[sid] = rec["sandbox"]
            else:
                recs.pop(sid, None)
            holds[sid] = [dict(h, id=sid) for h in rec.get("holds", [])]
            seq = rec["seq"]
    out = {"format": "cubevs-fp-state", "version": 1, "sandboxes": list(recs.values()),
           "hostPortHolds": [h for v in holds.values() for h in v], "journalSeq": seq}
    json.dump(out, sys.stdout, indent=1)
    print()


main(sys.argv[1])
