#!/usr/bin/env python3
"""API contract test: real requests against a running cubevs-fp, every answer checked against
docs/openapi.yaml (status documented, content type, JSON schema), wrong methods against the
Allow header, unknown routes, oversized bodies. Every operation of the spec must be exercised.

usage: contract.py BASE_URL OPENAPI_YAML IFACE1 IFACE2
"""
import http.client
import json
import os
import re
import sys
import urllib.parse

import jsonschema
import yaml

FAILS = []


def fail(msg):
    FAILS.append(msg)
    print('not ok - ' + msg)


def to_json_schema(node):
    """OpenAPI 3.0 schema objects → JSON Schema (nullable is the only difference we use)."""
    if isinstance(node, dict):
        out = {k: to_json_schema(v) for k, v in node.items() if k != 'nullable'}
        if node.get('nullable') and 'type' in node:
            out['type'] = [node['type'], 'null']
        return out
    if isinstance(node, list):
        return [to_json_schema(v) for v in node]
    return node


class Contract:
    def __init__(self, base, spec_path):
        u = urllib.parse.urlparse(base)
        self.host, self.port = u.hostname, u.port
        with open(spec_path) as f:
            self.spec = yaml.safe_load(f)
        self.components = to_json_schema(self.spec['components'])
        self.templates = []
        for p in self.spec['paths']:
            rx = '^' + re.sub(r'\{[^/]+\}', '[^/]+', p) + '$'
            self.templates.append((re.compile(rx), p))
        self.exercised = set()
        self.checks = 0

    def schema_ok(self, schema, value, what):
        doc = dict(to_json_schema(schema))
        doc['components'] = self.components
        try:
            jsonschema.validate(value, doc)
            return True
        except jsonschema.ValidationError as e:
            fail('%s: answer does not match the schema: %s at %s' %
                 (what, e.message, list(e.absolute_path)))
            return False

    def request(self, method, path, body=None, raw=None):
        c = http.client.HTTPConnection(self.host, self.port, timeout=20)
        headers = {}
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
        if data is not None:
            headers['Content-Type'] = 'application/json'
        c.request(method, path, body=data, headers=headers)
        r = c.getresponse()
        text = r.read()
        hdrs = {k.lower(): v for k, v in r.getheaders()}
        c.close()
        return r.status, hdrs, text

    def check(self, method, path, body=None, raw=None, want=None):
        """One request; returns the parsed JSON body (or text)."""
        self.checks += 1
        status, hdrs, text = self.request(method, path, body, raw)
        what = '%s %s -> %d' % (method, path, status)
        ok = True
        if want is not None and status != want:
            fail('%s: expected %d (%s)' % (what, want, text[:200]))
            ok = False
        route = urllib.parse.urlparse(path).path
        tmpl = next((t for rx, t in self.templates if rx.match(route)), None)
        ctype = hdrs.get('content-type', '')
        parsed = None
        if ctype.startswith('application/json'):
            try:
                parsed = json.loads(text)
            except ValueError:
                fail('%s: body is not JSON' % what)
                return None
        elif ctype.startswith('text/plain'):
            parsed = text.decode()
        if tmpl is None:
            if status != 404:
                fail('%s: a route outside the spec must be 404' % what)
            return self.error_ok(what, parsed) and parsed
        ops = self.spec['paths'][tmpl]
        op = ops.get(method.lower())
        if op is None:
            allowed = sorted(m.upper() for m in ops if m in ('get', 'put', 'delete', 'post',
                                                            'patch'))
            if status != 405:
                fail('%s: method not in the spec must be 405' % what)
            got = sorted(a.strip() for a in hdrs.get('allow', '').split(',') if a.strip())
            if got != allowed:
                fail('%s: Allow is %s, the spec has %s' % (what, got, allowed))
            self.error_ok(what, parsed)
            return parsed
        resp = op['responses'].get(str(status)) or op['responses'].get('default')
        if resp is None:
            fail('%s: status %d is not documented for %s %s' % (what, status, method, tmpl))
            return parsed
        if '$ref' in resp:
            resp = self.spec['components']['responses'][resp['$ref'].split('/')[-1]]
        content = resp.get('content')
        if not content:
            if text:
                fail('%s: documented without a body, got %r' % (what, text[:100]))
        else:
            mt = next(iter(content))
            if not ctype.startswith(mt):
                fail('%s: content type %r, the spec has %r' % (what, ctype, mt))
            elif mt == 'application/json':
                ok = self.schema_ok(content[mt]['schema'], parsed, what) and ok
        if 200 <= status < 300:
            self.exercised.add((tmpl, method.lower()))
        if ok:
            print('ok - %s' % what)
        return parsed

    def error_ok(self, what, parsed):
        return self.schema_ok({'$ref': '#/components/schemas/Error'}, parsed, what)


def main():
    base, spec, if1, if2 = sys.argv[1:5]
    c = Contract(base, spec)
    c.check('GET', '/healthz', want=200)
    c.check('GET', '/readyz', want=200)
    s = c.check('PUT', '/sandboxes/c1', {'iface': if1, 'exposedPorts': [8080]}, want=201)
    c.check('PUT', '/sandboxes/c1', {'iface': if1, 'exposedPorts': [8080]}, want=200)
    s2 = c.check('PUT', '/sandboxes/c2', {'iface': if2, 'exposedPorts': [8080, 9090],
                                          'sandboxIP': '192.168.0.77'}, want=201)
    if s2 and s2.get('sandboxIP') != '192.168.0.77':
        fail('a given sandboxIP is kept: %s' % s2)
    # A vhost-user port instead of an interface; exactly one of the two.
    vsock = '/tmp/cvs-contract-%d/v1.sock' % os.getpid()
    c.check('PUT', '/sandboxes/v1', {'vhostUser': {'socket': vsock, 'mode': 'server'},
                                     'exposedPorts': [8080]}, want=201)
    c.check('PUT', '/sandboxes/v2', {'vhostUser': {'socket': vsock}}, want=409)
    c.check('PUT', '/sandboxes/v2', {'iface': if1, 'vhostUser': {'socket': '/tmp/x.sock'}},
            want=400)
    c.check('PUT', '/sandboxes/v2', {'vhostUser': {'socket': '/tmp/x.sock', 'mode': 'peer'}},
            want=400)
    c.check('PUT', '/sandboxes/v2', {'vhostUser': {'socket': 'relative.sock'}}, want=400)
    c.check('GET', '/sandboxes', want=200)
    c.check('GET', '/sandboxes/v1', want=200)
    c.check('GET', '/stats', want=200)
    c.check('DELETE', '/sandboxes/v1', want=204)
    if os.path.exists(vsock):
        fail('DELETE left the vhost-user socket %s' % vsock)
    try:
        os.rmdir(os.path.dirname(vsock))
    except OSError:
        pass
    c.check('GET', '/sandboxes', want=200)
    c.check('GET', '/sandboxes/c1', want=200)
    c.check('GET', '/sandboxes/nope', want=404)
    ep = c.check('GET', '/sandboxes/c1/exposed-ports/8080', want=200)
    if s and ep and ep['hostPort'] != s['exposedPorts'][0]['hostPort']:
        fail('exposed-ports and the registration disagree: %s %s' % (ep, s))
    c.check('GET', '/sandboxes/c1/exposed-ports/9090', want=404)
    # The IPv6 endpoint is asked for by a query parameter; this node has no --node-ip6.
    if c.check('GET', '/sandboxes/c1/exposed-ports/8080?family=ipv4', want=200) != ep:
        fail('?family=ipv4 is not the default answer')
    c.check('GET', '/sandboxes/c1/exposed-ports/8080?family=ipv6', want=409)
    c.check('GET', '/sandboxes/c1/exposed-ports/8080?family=inet6', want=400)
    c.check('GET', '/sandboxes/c1/exposed-ports/0', want=400)
    c.check('GET', '/sandboxes/c1/exposed-ports/abc', want=400)
    c.check('GET', '/sandboxes/nope/exposed-ports/8080', want=404)
    c.check('PUT', '/sandboxes/c3', raw=b'{"iface":', want=400)
    c.check('PUT', '/sandboxes/c3', raw=b'[1,2]', want=400)
    c.check('PUT', '/sandboxes/c3', {'iface': if1, 'bogus': 1}, want=400)
    c.check('PUT', '/sandboxes/c3', {'exposedPorts': [1]}, want=400)
    c.check('PUT', '/sandboxes/c3', {'iface': 'nosuch0', 'exposedPorts': [1]}, want=400)
    c.check('PUT', '/sandboxes/c3', {'iface': if1, 'exposedPorts': [70000]}, want=400)
    c.check('PUT', '/sandboxes/c3', {'iface': if1, 'exposedPorts': [1, 1]}, want=400)
    c.check('PUT', '/sandboxes/c3', {'iface': if1, 'exposedPorts': ['80']}, want=400)
    c.check('PUT', '/sandboxes/c3', {'iface': if1}, want=409)
    c.check('PUT', '/sandboxes/c1', {'iface': if2}, want=409)
    c.check('PUT', '/sandboxes/c1', {'iface': if1, 'sandboxIP': '192.168.0.99'}, want=409)
    c.check('PUT', '/sandboxes/c3', {'iface': if1, 'sandboxIP': '10.0.0.1'}, want=400)
    c.check('PUT', '/sandboxes/a%20b', {'iface': if1}, want=400)
    c.check('PUT', '/sandboxes/' + 'x' * 65, {'iface': if1}, want=400)
    c.check('PUT', '/sandboxes/c3', raw=b'{"iface":"' + b'x' * (2 << 20) + b'"}', want=413)
    c.check('GET', '/sandboxes/c1/policy', want=200)
    c.check('PUT', '/sandboxes/c1/policy', {'allowInternetAccess': False,
                                            'allowOut': ['198.18.0.0/24'],
                                            'denyOut': ['0.0.0.0/0']}, want=200)
    s = c.check('GET', '/sandboxes/c1', want=200)
    if s and s.get('policy', {}).get('allowOut') != ['198.18.0.0/24']:
        fail('the registration shows its policy: %s' % s)
    c.check('PUT', '/sandboxes/c1/policy', {'allowOut': ['not-a-cidr']}, want=400)
    c.check('PUT', '/sandboxes/c1/policy', {'bogus': 1}, want=400)
    c.check('PUT', '/sandboxes/c1/policy', raw=b'{', want=400)
    c.check('GET', '/sandboxes/nope/policy', want=404)
    c.check('PUT', '/sandboxes/nope/policy', {'allowInternetAccess': True}, want=404)
    c.check('PUT', '/sandboxes/c4', {'iface': 'nosuch1', 'policy': {'denyOut': ['x']}},
            want=400)
    c.check('GET', '/stats', want=200)
    c.check('GET', '/metrics', want=200)
    c.check('GET', '/sessions', want=200)
    c.check('GET', '/sessions?limit=2&sandbox=c1&proto=tcp', want=200)
    c.check('GET', '/sessions?limit=0', want=400)
    c.check('GET', '/sessions?limit=1001', want=400)
    c.check('GET', '/sessions?proto=sctp', want=400)
    c.check('GET', '/sessions?sandbox=nope', want=404)
    c.check('GET', '/sessions?cursor=x', want=400)
    c.check('GET', '/sessions?foo=1', want=400)
    for m, p in [('POST', '/sandboxes'), ('DELETE', '/sandboxes'), ('POST', '/sandboxes/c1'),
                 ('PATCH', '/sandboxes/c1'), ('POST', '/sandboxes/c1/exposed-ports/8080'),
                 ('DELETE', '/sandboxes/c1/exposed-ports/8080'), ('PUT', '/healthz'),
                 ('POST', '/readyz'), ('DELETE', '/metrics'), ('PUT', '/stats'),
                 ('POST', '/sessions'), ('DELETE', '/sandboxes/c1/policy'),
                 ('POST', '/sandboxes/c1/policy')]:
        c.check(m, p, want=405)
    for p in ['/nothing', '/sandboxes/c1/other', '/sandboxes/c1/exposed-ports', '/',
              '/sandboxes/c1/exposed-ports/8080/x']:
        c.check('GET', p, want=404)
    c.check('DELETE', '/sandboxes/c2', want=204)
    c.check('DELETE', '/sandboxes/c2', want=404)
    c.check('DELETE', '/sandboxes/c1', want=204)
    for p, ops in c.spec['paths'].items():
        for m in ops:
            if m in ('get', 'put', 'delete', 'post', 'patch') and (p, m) not in c.exercised:
                fail('%s %s of the spec was never answered with 2xx' % (m.upper(), p))
    print('%d requests checked, %d failures' % (c.checks, len(FAILS)))
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
