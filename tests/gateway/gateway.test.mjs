// Acceptance cases 10-17 and 19 (behaviour notes §11, "Gateway"), the recommended extra
// HTTP cases, a multi-MiB result and 50 concurrent calls across two servers.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { RawClient, fakeCmd, freePort, health, run, serve, shq, sleep, tmpdir } from "./lib.mjs";

describe("alpha + beta behind one gateway", () => {
	let g, dir, c;

	before(async () => {
		dir = tmpdir();
		const port = await freePort();
		g = await serve({
			alpha: { runCmd: fakeCmd("alpha", { FAKE_BANNER: "1" }),
				envs: { FAKE_SECRET: "a-secret" } },
			beta: { runCmd: fakeCmd("beta"), envs: { FAKE_SECRET: "b-secret" } },
		}, { dir, port, token: "must-not-leak" });
		c = new RawClient(g.url, "must-not-leak");
		await c.initialize();
	});
	after(async () => {
		await g?.stop();
	});

	test("10: aggregation, routing and per-server env", async () => {
		const names = await c.listTools();
		const core = names.filter((n) => /echo$|_env$|_crash$/.test(n));
		assert.deepEqual(core, ["alpha_crash", "alpha_env", "beta_crash", "beta_echo",
			"beta_env", "echo"]);
		assert.deepEqual(names, [...names].sort(), "sorted by exported name");
		assert.equal(await c.callText("echo", { text: "hi" }), "alpha:hi");
		assert.equal(await c.callText("beta_echo", { text: "hi" }), "beta:hi");
		assert.equal(await c.callText("alpha_env", {}), "secret=a-secret token=false");
		assert.equal(await c.callText("beta_env", {}), "secret=b-secret token=false");
		// A clash renames only the later server's tool; fields other than name are kept.
		const r = await c.request("tools/list", {});
		const be = r.result.tools.find((t) => t.name === "beta_echo");
		assert.equal(be.description, "echo text");
		assert.equal(be.inputSchema.properties.text.type, "string");
	});

	test("11: a crashed server restarts on the next call", async () => {
		const crash = await c.call("alpha_crash", {});
		assert.ok(crash.error, "crash call returns an error");
		assert.equal(crash.error.code, -32603);
		let got = null;
		const t0 = Date.now();
		while (Date.now() - t0 < 10000) {
			const r = await c.call("echo", { text: "back" });
			if (r.result) {
				got = r.result.content[0].text;
				break;
			}
			await sleep(100);
		}
		assert.equal(got, "alpha:back");
		// beta was not disturbed, and the tool list is unchanged.
		assert.equal(await c.callText("beta_echo", { text: "still" }), "beta:still");
		assert.match(g.log(), /mcp server exited; it will be restarted on the next call/);
	});

	test("12: bearer token required on every /mcp request", async () => {
		const body = { jsonrpc: "2.0", id: 1, method: "tools/list" };
		const bad = [undefined, "Bearer nope", "must-not-leak", "bearer must-not-leak",
			"Bearer  must-not-leak", "Bearer must-not-lea", "Bearer must-not-leakX"];
		for (const auth of bad) {
			const h = { "Content-Type": "application/json",
				Accept: "application/json, text/event-stream" };
			if (auth !== undefined)
				h.Authorization = auth;
			for (const method of ["POST", "GET", "DELETE", "PUT"]) {
				const r = await fetch(g.url, { method, headers: h,
					body: method === "POST" || method === "PUT" ?
						JSON.stringify(body) : undefined });
				assert.equal(r.status, 401, `${method} ${auth}`);
				assert.equal(r.headers.get("www-authenticate"),
					'Bearer realm="mcp-gateway"');
				assert.equal(await r.text(), "unauthorized\n");
			}
		}
	});

	test("13: /health needs no token", async () => {
		const h = await health(g.port);
		assert.equal(h.status, 200);
		assert.match(h.ctype, /^application\/json/);
		const names = await c.listTools();
		assert.ok(h.text.endsWith("}\n"));
		const body = JSON.parse(h.text);
		// Each server under a user of its own from the default range, none shared.
		const iso = body.isolation.servers;
		assert.deepEqual(Object.keys(iso), ["alpha", "beta"]);
		for (const s of Object.values(iso)) {
			assert.equal(s.runAs, "isolated");
			assert.ok(s.uid >= 60100 && s.uid <= 61099, `uid ${s.uid}`);
		}
		assert.notEqual(iso.alpha.uid, iso.beta.uid);
		delete body.isolation;
		assert.deepEqual(body, { prompts: 0, resourceTemplates: 0, resources: 0,
			servers: ["alpha", "beta"], status: "ok", tools: names.length });
		const r = await fetch(`http://127.0.0.1:${g.port}/nope`);
		assert.equal(r.status, 404);
		assert.equal(await r.text(), "404 page not found\n");
	});

	test("19: server stderr is in the log, prefixed per line", async () => {
		const log = g.log();
		assert.match(log, /^\[alpha\] alpha starting$/m);
		assert.match(log, /^\[alpha\] partial$/m);
		assert.doesNotMatch(log, /must-not-leak|a-secret|b-secret/, "secrets in the log");
	});

	test("streamable HTTP status codes", async () => {
		const ping = { jsonrpc: "2.0", id: 99, method: "ping" };
		let r = await c.post(ping, { "Mcp-Session-Id": "NOSUCHSESSION" });
		assert.equal(r.status, 404);
		r = await c.post(ping, { "MCP-Protocol-Version": "1999-01-01" });
		assert.equal(r.status, 400);
		assert.match(r.text, /Unsupported protocol version/);
		r = await c.post(ping, { "Content-Type": "text/plain" });
		assert.equal(r.status, 415);
		// A client that takes only JSON gets plain JSON; one that takes neither, 406.
		r = await c.post(ping, { Accept: "application/json" });
		assert.equal(r.status, 200);
		assert.match(r.headers.get("content-type"), /^application\/json/);
		assert.deepEqual(JSON.parse(r.text), { jsonrpc: "2.0", id: 99, result: {} });
		r = await c.post(ping, { Accept: "text/event-stream" });
		assert.equal(r.status, 406);
		r = await c.post(ping, { Accept: "*/*" });
		assert.equal(r.status, 200);
		// Invalid JSON is a JSON-RPC parse error (-32700) with a null id.
		for (const bad of ["", "{not json"]) {
			r = await c.post(bad);
			assert.equal(r.status, 400);
			const e = JSON.parse(r.text);
			assert.equal(e.id, null);
			assert.equal(e.error.code, -32700);
			assert.match(e.error.message, /^Parse error/);
		}
		r = await c.post([ping]);
		assert.equal(r.status, 400, "batch in a 2025-06-18 session");
		assert.equal(JSON.parse(r.text).error.code, -32600);
		r = await c.post({ jsonrpc: "2.0", method: "notifications/cancelled",
			params: { requestId: 5 } });
		assert.equal(r.status, 202);
		assert.equal(r.text, "");
		r = await c.post(ping);
		assert.equal(r.status, 200);
		assert.match(r.headers.get("content-type"), /^text\/event-stream/);
		assert.match(r.text, /^event: message\ndata: \{.*\}\n\n$/);
		assert.deepEqual(r.json.result, {});
		assert.equal(r.headers.get("mcp-session-id"), null, "only initialize sets it");
		r = await c.request("resources/list", {});
		assert.deepEqual(r.result, { resources: [] }, "fake servers have no resources");
		r = await c.request("nope/nope", {});
		assert.equal(r.error.code, -32601);
		r = await c.request("logging/setLevel", { level: "info" });
		assert.deepEqual(r.result, {});
		r = await c.call("nope", {});
		assert.equal(r.error.code, -32602);
		assert.equal(r.error.message, 'unknown tool "nope"');
		r = await c.request("tools/list", { cursor: "garbage" });
		assert.equal(r.error.code, -32602);
		r = await c.post({ jsonrpc: "2.0", id: null, method: "ping" });
		assert.equal(r.status, 400);
		const put = await fetch(g.url, { method: "PUT", headers: c.headers() });
		assert.equal(put.status, 405);
		assert.equal(put.headers.get("allow"), "GET, POST, DELETE");
	});

	test("sessions: required initialize, DELETE, 404 afterwards", async () => {
		const raw = new RawClient(g.url, "must-not-leak");
		// No session header and no initialize: 400, with a JSON-RPC error to read.
		for (const method of ["tools/list", "ping"]) {
			const r0 = await raw.post({ jsonrpc: "2.0", id: 1, method });
			assert.equal(r0.status, 400);
			assert.match(JSON.parse(r0.text).error.message, /Mcp-Session-Id/);
		}
		let r;
		const init = await raw.initialize("1999-01-01");
		assert.equal(init.json.result.protocolVersion, "2025-11-25", "unknown -> latest");
		assert.equal(init.json.result.serverInfo.name, "cube-mcp-gateway");
		assert.ok(init.json.result.capabilities.tools);
		assert.match(raw.session, /^[\x21-\x7e]{16,}$/);
		const other = new RawClient(g.url, "must-not-leak");
		await other.initialize("2025-03-26");
		assert.equal(other.protocol, "2025-03-26");
		assert.notEqual(other.session, raw.session);
		assert.ok((await raw.listTools()).includes("echo"));
		let d = await fetch(g.url, { method: "DELETE", headers: raw.headers() });
		assert.equal(d.status, 204);
		d = await fetch(g.url, { method: "DELETE", headers: raw.headers() });
		assert.equal(d.status, 404);
		const noSess = { ...raw.headers() };
		delete noSess["Mcp-Session-Id"];
		d = await fetch(g.url, { method: "DELETE", headers: noSess });
		assert.equal(d.status, 400);
		r = await raw.post({ jsonrpc: "2.0", id: 5, method: "ping" });
		assert.equal(r.status, 404);
		// The other session is unaffected.
		assert.equal(await other.callText("echo", { text: "o" }), "alpha:o");
	});

	test("server-to-client ping is answered; roots/list of a client without roots fails",
		async () => {
			const t = JSON.parse(await c.callText("roundtrip", {}));
			assert.deepEqual(t.ping, {});
			assert.equal(t.roots, undefined);
			assert.equal(t.rootsError.code, -32601);
			assert.match(t.rootsError.message, /did not declare the roots capability/);
		});

	test("a 6 MiB tool result passes intact", async () => {
		const n = 6 * 1024 * 1024 + 17;
		const text = await c.callText("big", { bytes: n });
		assert.equal(text.length, n);
		const chunk = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+/";
		assert.equal(text.slice(0, 64), chunk);
		assert.equal(text.slice(64 * 1000, 64 * 1001), chunk);
		// Large request bodies within the limit go through too (2 MiB argument).
		const arg = "y".repeat(2 * 1024 * 1024);
		assert.equal((await c.callText("echo", { text: arg })).length, arg.length + 6);
	});

	test("request bodies over the limit get 413", async () => {
		const r = await c.post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: {
			name: "echo", arguments: { text: "z".repeat(17 * 1024 * 1024) } } });
		assert.equal(r.status, 413);
	});

	test("50 concurrent calls across two servers all answer", async () => {
		const calls = [];
		for (let i = 0; i < 50; i++) {
			const tool = i % 2 ? "sleep" : "beta_sleep";
			calls.push(c.callText(tool, { ms: 200 + (i * 37) % 300, tag: i }));
		}
		const t0 = Date.now();
		const out = await Promise.all(calls);
		const ms = Date.now() - t0;
		for (let i = 0; i < 50; i++)
			assert.equal(out[i], `${i % 2 ? "alpha" : "beta"}:slept:${i}`);
		// Multiplexed, not serialised: 25 calls of >= 200 ms each on one server.
		assert.ok(ms < 4000, `took ${ms} ms`);
	});

	test("a duplicate request id in flight on one session is refused", async () => {
		const body = { jsonrpc: "2.0", id: "dup", method: "tools/call",
			params: { name: "sleep", arguments: { ms: 600 } } };
		const first = c.post(body);
		await sleep(150);
		const second = await c.post(body);
		assert.equal(second.status, 400);
		assert.equal(second.json?.error?.code, -32600);
		assert.equal((await first).status, 200);
	});
});

test("14: an empty configured token rejects everything", async () => {
	const dir = tmpdir();
	const port = await freePort();
	const g = await serve({ alpha: { runCmd: fakeCmd("alpha") } }, { dir, port, token: "" });
	try {
		const c = new RawClient(g.url, "");
		const r = await c.post({ jsonrpc: "2.0", id: 1, method: "initialize", params: {
			protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x",
				version: "0" } } });
		assert.equal(r.status, 401);
		assert.equal(r.text, "unauthorized\n");
		assert.equal((await health(port)).status, 200);
	} finally {
		await g.stop();
	}
});

test("15: one failing server fails the start, naming it", async () => {
	const dir = tmpdir();
	const port = await freePort();
	const g = await serve({ alpha: { runCmd: fakeCmd("alpha") },
		broken: { runCmd: "echo boom >&2; exit 7" } }, { dir, port, wait: false });
	const code = await g.exited;
	assert.equal(code, 1);
	const log = g.log();
	assert.match(log, new RegExp('mcp-gateway: mcp server "broken": ' +
		'start "/bin/sh -c echo boom >&2; exit 7": .*exit status 7'));
	assert.match(log, /^\[broken\] boom$/m);
	assert.doesNotMatch(log, /mcp server "alpha":/);
});

test("16: installCmd runs in the server dir before start, every start", async () => {
	const dir = tmpdir();
	const port = await freePort();
	// A local server runs in its own HOME, as its own user; the install writes where it ran.
	const home = path.join(dir, "home", "alpha");
	const cfg = { alpha: { installCmd: "pwd > where; id -u > uid; echo run >> count",
		runCmd: fakeCmd("alpha") } };
	for (let i = 0; i < 2; i++) {
		const g = await serve(cfg, { dir, port });
		await g.stop();
	}
	assert.equal(fs.readFileSync(path.join(home, "where"), "utf8").trim(), home);
	const uid = Number(fs.readFileSync(path.join(home, "uid"), "utf8"));
	assert.ok(uid >= 60100 && uid <= 61099, `install ran as uid ${uid}`);
	assert.equal(fs.statSync(home).uid, uid);
	assert.equal(fs.statSync(home).mode & 0o777, 0o700);
	assert.equal(fs.readFileSync(path.join(home, "count"), "utf8"), "run\nrun\n");
});

test("17: a failing installCmd fails the start", async () => {
	const dir = tmpdir();
	const port = await freePort();
	const g = await serve({ alpha: { installCmd: "echo installing; exit 4",
		runCmd: fakeCmd("alpha") } }, { dir, port, wait: false });
	assert.equal(await g.exited, 1);
	assert.match(g.log(), /mcp server "alpha": installCmd: exit status 4/);
	assert.match(g.log(), /^\[alpha\] installing$/m);
});

test("upstream handshake edge cases", async () => {
	const dir = tmpdir();
	let port = await freePort();
	// Unknown protocol version from the server fails its start.
	let g = await serve({ odd: { runCmd: fakeCmd("odd", { FAKE_PROTOCOL: "1999-01-01" }) } },
		{ dir, port, wait: false });
	assert.equal(await g.exited, 1);
	assert.match(g.log(), /unsupported protocol version "1999-01-01"/);
	// Paginated upstream tools/list, invalid schemas skipped, missing schema defaulted;
	// and our own pagination with a small page size.
	port = await freePort();
	g = await serve({ pag: { runCmd: fakeCmd("pag", { FAKE_TOOLS_PAGE: "2",
		FAKE_BAD_SCHEMA: "1", FAKE_NO_SCHEMA: "1" }) } }, { dir, port,
		extra: ["--page-size", "3"] });
	try {
		const c = new RawClient(g.url, "tok");
		await c.initialize();
		const first = await c.request("tools/list", {});
		assert.equal(first.result.tools.length, 3);
		assert.ok(first.result.nextCursor);
		const names = await c.listTools();
		assert.deepEqual(names, ["big", "echo", "noschema", "pag_crash", "pag_env",
			"roundtrip", "sleep", "steps"]);
		const all = [];
		let cursor;
		do {
			const r = await c.request("tools/list", cursor ? { cursor } : {});
			all.push(...r.result.tools);
			cursor = r.result.nextCursor;
		} while (cursor);
		const ns = all.find((t) => t.name === "noschema");
		assert.deepEqual(ns.inputSchema, { type: "object" });
		assert.match(g.log(), /skipping tool with invalid schema/);
	} finally {
		await g.stop();
	}
});

test("no servers: an empty gateway still serves", async () => {
	const dir = tmpdir();
	const port = await freePort();
	const g = await serve({}, { dir, port });
	try {
		const c = new RawClient(g.url, "tok");
		await c.initialize();
		assert.deepEqual(await c.listTools(), []);
		const body = JSON.parse((await health(port)).text);
		assert.deepEqual(body.isolation.servers, {});
		delete body.isolation;
		assert.deepEqual(body, { prompts: 0, resourceTemplates: 0, resources: 0,
			servers: [], status: "ok", tools: 0 });
	} finally {
		await g.stop();
	}
});

test("idle sessions expire", async () => {
	const dir = tmpdir();
	const port = await freePort();
	const g = await serve({}, { dir, port, extra: ["--session-idle-timeout", "300ms"] });
	try {
		const c = new RawClient(g.url, "tok");
		await c.initialize();
		assert.equal((await c.post({ jsonrpc: "2.0", id: 1, method: "ping" })).status, 200);
		await sleep(700);
		assert.equal((await c.post({ jsonrpc: "2.0", id: 2, method: "ping" })).status, 404);
	} finally {
		await g.stop();
	}
});

test("SIGTERM closes upstreams and leaves no children", async () => {
	const dir = tmpdir();
	const port = await freePort();
	const g = await serve({ alpha: { runCmd: fakeCmd("alpha") } }, { dir, port });
	const kids = fs.readFileSync(`/proc/${g.pid}/task/${g.pid}/children`, "utf8").trim()
		.split(/\s+/).filter(Boolean).map(Number);
	assert.ok(kids.length >= 1);
	const t0 = Date.now();
	await g.stop();
	assert.equal(await g.exited, 0);
	assert.ok(Date.now() - t0 < 6000);
	for (const k of kids) {
		let gone = false;
		try {
			process.kill(k, 0);
		} catch {
			gone = true;
		}
		assert.ok(gone, `child ${k} survived`);
	}
	const r = await run(["version"]);
	assert.equal(r.code, 0);
});
