#!/bin/bash
# Operator files without root or a running instance: man pages render without warnings, the
# systemd unit parses, the OpenAPI file is OpenAPI 3 with every $ref resolvable, and the ctl
# tool's usage and exit codes.
DOCS=${DOCS:?}
FPCTL=${CUBEVS_FPCTL:?}
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }

for m in "$DOCS/cubevs-fp.8" "$DOCS/cubevs-fpctl.8"; do
	if ! command -v groff >/dev/null; then
		echo "# groff missing: $m not rendered"
	elif out=$(groff -man -ww -z "$m" 2>&1) && [ -z "$out" ]; then
		ok "$(basename "$m") renders without warnings"
	else
		bad "$(basename "$m"): $out"
	fi
done

if command -v systemd-analyze >/dev/null; then
	tmp=$(mktemp -d)
	# verify wants the binary to exist; the unit's own path is /usr/local/bin.
	sed "s|/usr/local/bin/cubevs-fp|/bin/true|" "$DOCS/cubevs-fp.service" >"$tmp/cubevs-fp.service"
	out=$(systemd-analyze verify --man=no "$tmp/cubevs-fp.service" 2>&1)
	rm -rf "$tmp"
	if [ -z "$out" ]; then ok "cubevs-fp.service parses"; else bad "cubevs-fp.service: $out"; fi
	grep -q '^Type=notify' "$DOCS/cubevs-fp.service" && grep -q '^LimitMEMLOCK=infinity' \
		"$DOCS/cubevs-fp.service" && ok "the unit is Type=notify with LimitMEMLOCK=infinity" ||
		bad "unit type or memlock"
else
	echo "# systemd-analyze missing: unit not verified"
fi

if python3 - "$DOCS/openapi.yaml" <<'PY'
import sys, yaml
spec = yaml.safe_load(open(sys.argv[1]))
assert spec["openapi"].startswith("3."), spec["openapi"]
def refs(n):
    if isinstance(n, dict):
        for k, v in n.items():
            if k == "$ref":
                yield v
            else:
                yield from refs(v)
    elif isinstance(n, list):
        for v in n:
            yield from refs(v)
for r in refs(spec):
    node = spec
    for part in r.lstrip("#/").split("/"):
        node = node[part]
for p, ops in spec["paths"].items():
    for m, op in ops.items():
        if m in ("get", "put", "delete", "post"):
            assert op.get("responses"), (p, m)
PY
then ok "openapi.yaml is OpenAPI 3 and every \$ref resolves"; else bad "openapi.yaml"; fi

out=$("$FPCTL" --help) && [[ $out == Usage:* ]] && ok "cubevs-fpctl --help" || bad "--help"
"$FPCTL" >/dev/null 2>&1; [ $? = 2 ] && ok "no command → exit 2" || bad "no command"
"$FPCTL" --api nonsense status >/dev/null 2>&1; [ $? = 2 ] && ok "bad --api → exit 2" ||
	bad "bad --api"
out=$("$FPCTL" --api 127.0.0.1:1 --timeout 2 sandbox list 2>&1)
[ $? = 3 ] && [[ $out == *"cannot connect"* ]] && ok "no server → exit 3 with a reason" ||
	bad "no server: $out"
[ $fails = 0 ]
