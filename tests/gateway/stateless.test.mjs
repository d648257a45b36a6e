// What mcp-gateway adds to revision 2026-07-28 beyond what the conformance suite can see
// through one server: task ids of two servers that hand out the same ids, task status
// notifications on listen streams, Mcp-Param headers, a server's own requestState, the HTTP
// status of refusals the gateway relays, and the older revisions left as they were.
// Upstreams: two conformance/server-2026-07-28.mjs and conformance/server.mjs, over stdio.

import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { NODE, RawClient, freePort, parseBody, serve, shq, sleep, tmpdir } from "./lib.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const NEXT = path.join(HERE, "conformance", "server-2026-07-28.mjs");
const OLD = path.join(HERE, "conformance", "server.mjs");
const TOKEN = "stateless-token";
const TASKS = "io.modelcontextprotocol/tasks";
const V = "2026-07-28";

function meta(caps = {}) {
	return { "io.modelcontextprotocol/protocolVersion": V,
		"io.modelcontextprotocol/clientCapabilities": caps };
}

const WITH_TASKS = { extensions: { [TASKS]: {} } };

describe("mcp-gateway at 2026-07-28", () => {
	let g, nextId = 1;

	before(async () => {
		const dir = tmpdir("gw-stateless");
		g = await serve({ a: { runCmd: `exec ${shq(NODE)} ${shq(NEXT)}` },
			b: { runCmd: `exec ${shq(NODE)} ${shq(NEXT)}` },
			old: { runCmd: `exec ${shq(NODE)} ${shq(OLD)}` } },
		{ dir, port: await freePort(), token: TOKEN });
	});

	after(async () => {
		await g?.stop();
	});

	// One stateless request; headers default to what the revision asks for.
	async function rpc(method, params = {}, { caps = {}, headers = {}, accept } = {}) {
		const id = nextId++;
		const name = params.name ?? params.uri ?? params.taskId;
		const r = await fetch(g.url, { method: "POST", headers: {
			Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json",
			Accept: accept ?? "application/json, text/event-stream",
			"MCP-Protocol-Version": V, "Mcp-Method": method,
			...(name === undefined ? {} : { "Mcp-Name": name }), ...headers },
		body: JSON.stringify({ jsonrpc: "2.0", id, method,
			params: { ...params, _meta: meta(caps) } }) });
		const text = await r.text();
		const msg = parseBody(text, r.headers.get("content-type"));
		return { status: r.status, ctype: r.headers.get("content-type"), msg, id };
	}

	async function finished(taskId) {
		for (let i = 0; i < 100; i++) {
			const r = await rpc("tasks/get", { taskId }, { caps: WITH_TASKS });
			assert.equal(r.msg.error, undefined, JSON.stringify(r.msg));
			if (["completed", "failed", "cancelled"].includes(r.msg.result.status))
				return r.msg.result;
			await sleep(50);
		}
		throw new Error(`task ${taskId} did not finish`);
	}

	test("two servers' equal task ids become two ids of the gateway's, each routed home",
		async () => {
			const ra = await rpc("tools/call", { name: "slow_compute",
				arguments: { seconds: 0.2, label: "from-a" } }, { caps: WITH_TASKS });
			const rb = await rpc("tools/call", { name: "b_slow_compute",
				arguments: { seconds: 0.2, label: "from-b" } }, { caps: WITH_TASKS });
			const [ta, tb] = [ra.msg.result, rb.msg.result];
			assert.equal(ta.resultType, "task");
			assert.equal(tb.resultType, "task");
			// Both servers call their first task "task-1"; the client never sees that.
			assert.notEqual(ta.taskId, tb.taskId);
			for (const id of [ta.taskId, tb.taskId])
				assert.match(id, /^[a-z2-7]{26}$/);
			assert.match((await finished(ta.taskId)).result.content[0].text, /from-a/);
			assert.match((await finished(tb.taskId)).result.content[0].text, /from-b/);
			const c = await rpc("tasks/cancel", { taskId: ta.taskId }, { caps: WITH_TASKS });
			assert.deepEqual(c.msg.result, { resultType: "complete" });
			const u = await rpc("tasks/get", { taskId: "task-1" }, { caps: WITH_TASKS });
			assert.equal(u.msg.error.code, -32602, "a server's own id names nothing here");
		});

	test("tasks/* need the extension and an Mcp-Name that repeats the task id", async () => {
		const ra = await rpc("tools/call", { name: "slow_compute",
			arguments: { seconds: 0, label: "gate" } }, { caps: WITH_TASKS });
		const taskId = ra.msg.result.taskId;
		const r = await rpc("tasks/get", { taskId });
		assert.equal(r.status, 400);
		assert.equal(r.msg.error.code, -32021);
		assert.deepEqual(r.msg.error.data,
			{ requiredCapabilities: { extensions: { [TASKS]: {} } } });
		const m = await rpc("tasks/get", { taskId }, { caps: WITH_TASKS,
			headers: { "Mcp-Name": "someone-else" } });
		assert.equal(m.status, 400);
		assert.equal(m.msg.error.code, -32020);
		assert.equal(m.msg.id, m.id);
		// Without the extension a task-capable tool runs at once.
		const sync = await rpc("tools/call", { name: "slow_compute",
			arguments: { seconds: 0, label: "sync" } });
		assert.equal(sync.msg.result.resultType, "complete");
		assert.equal(sync.msg.result.taskId, undefined);
	});

	// A listen stream: its events, parsed as they come.
	async function listen(caps) {
		const ac = new AbortController();
		const r = await fetch(g.url, { method: "POST", signal: ac.signal, headers: {
			Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json",
			Accept: "application/json, text/event-stream", "MCP-Protocol-Version": V,
			"Mcp-Method": "subscriptions/listen" },
		body: JSON.stringify({ jsonrpc: "2.0", id: `listen-${nextId++}`,
			method: "subscriptions/listen", params: { notifications: {}, _meta: meta(caps) } }) });
		const events = [];
		(async () => {
			const dec = new TextDecoder();
			let buf = "";
			try {
				for await (const chunk of r.body) {
					buf += dec.decode(chunk, { stream: true });
					let i;
					while ((i = buf.indexOf("\n\n")) >= 0) {
						const data = buf.slice(0, i).split("\n").filter((l) =>
							l.startsWith("data: ")).map((l) => l.slice(6)).join("");
						buf = buf.slice(i + 2);
						if (data)
							events.push(JSON.parse(data));
					}
				}
			} catch {}
		})();
		return { events, close: () => ac.abort() };
	}

	test("task status notifications reach the listeners that declared the extension",
		async () => {
			const yes = await listen(WITH_TASKS), no = await listen({});
			await sleep(200);
			const r = await rpc("tools/call", { name: "slow_compute",
				arguments: { seconds: 0.3, label: "notify" } }, { caps: WITH_TASKS });
			const taskId = r.msg.result.taskId;
			const done = (e) => e.method === "notifications/tasks/status" &&
				e.params.status === "completed";
			for (let i = 0; i < 60 && !yes.events.some(done); i++)
				await sleep(50);
			await sleep(200);
			yes.close();
			no.close();
			const n = yes.events.find(done);
			assert.ok(n, `no completed status in ${JSON.stringify(yes.events)}`);
			assert.equal(n.params.taskId, taskId, "under the client's id, not the server's");
			assert.match(n.params.result.content[0].text, /notify/);
			assert.ok(n.params._meta["io.modelcontextprotocol/subscriptionId"]);
			assert.deepEqual(no.events.filter((e) => e.method === "notifications/tasks/status"),
				[]);
		});

	test("Mcp-Param headers repeat the arguments a tool mirrors, base64 decoded", async () => {
		const call = (args, headers) => rpc("tools/call", { name: "test_header_params",
			arguments: args }, { headers });
		let r = await call({ region: "eu-west" }, { "Mcp-Param-Region": "eu-west" });
		assert.equal(r.status, 200);
		assert.match(r.msg.result.content[0].text, /region=eu-west tenant=-/);
		const b64 = Buffer.from("eu-west").toString("base64");
		r = await call({ region: "eu-west", tenant: "t1" },
			{ "Mcp-Param-Region": `=?base64?${b64}?=`, "Mcp-Param-Tenant": " t1 " });
		assert.match(r.msg.result.content[0].text, /region=eu-west tenant=t1/);
		for (const headers of [{}, { "Mcp-Param-Region": "us-east" },
			{ "Mcp-Param-Region": "=?base64?ZXUtd2VzdA?=" }]) {
			r = await call({ region: "eu-west" }, headers);
			assert.equal(r.status, 400, JSON.stringify(headers));
			assert.equal(r.msg.error.code, -32020);
		}
		r = await call({ region: "eu-west", tenant: "t1" }, { "Mcp-Param-Region": "eu-west" });
		assert.equal(r.status, 400, "a mirrored argument without its header");
		// The older revisions have no such headers: nothing changes for them.
		const old = new RawClient(g.url, TOKEN);
		await old.initialize("2025-11-25");
		assert.match(await old.callText("test_header_params", { region: "x" }), /region=x/);
	});

	test("a server's own requestState reaches it untouched, a changed one is its to refuse",
		async () => {
			const name = "test_input_required_result_request_state";
			let r = await rpc("tools/call", { name, arguments: {} });
			const first = r.msg.result;
			assert.equal(first.resultType, "input_required");
			assert.doesNotMatch(first.requestState, /^mcp-gateway\./);
			const answer = { confirm: { action: "accept", content: { ok: true } } };
			r = await rpc("tools/call", { name, arguments: {}, inputResponses: answer,
				requestState: first.requestState });
			assert.match(r.msg.result.content[0].text, /state-ok/);
			r = await rpc("tools/call", { name, arguments: {}, inputResponses: answer,
				requestState: `x${first.requestState}` });
			assert.equal(r.msg.error.code, -32602);
			assert.match(r.msg.error.message, /integrity/);
		});

	test("refusals relayed from a server get their HTTP status", async () => {
		for (const accept of [undefined, "application/json"]) {
			const r = await rpc("tools/call", { name: "test_missing_capability",
				arguments: {} }, { accept });
			assert.equal(r.status, 400, accept ?? "sse");
			assert.equal(r.ctype, "application/json");
			assert.deepEqual(r.msg.error.data, { requiredCapabilities: { sampling: {} } });
		}
		// What is not a refusal keeps its stream.
		const ok = await rpc("tools/call", { name: "test_missing_capability", arguments: {} },
			{ caps: { sampling: {} } });
		assert.equal(ok.status, 200);
		assert.equal(ok.ctype, "text/event-stream");
		assert.equal(ok.msg.result.resultType, "input_required");
	});

	test("a call that stays quiet is streamed before its answer, a refusal's status or not",
		async () => {
			const r = await fetch(g.url, { method: "POST", headers: {
				Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json",
				Accept: "application/json, text/event-stream", "MCP-Protocol-Version": V,
				"Mcp-Method": "tools/call", "Mcp-Name": "slow_compute" },
			body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method: "tools/call",
				params: { name: "slow_compute", arguments: { seconds: 3.5, label: "quiet" },
					_meta: meta() } }) });
			const headersAt = Date.now();
			assert.equal(r.status, 200);
			assert.equal(r.headers.get("content-type"), "text/event-stream");
			const body = await r.text();
			assert.ok(Date.now() - headersAt > 700, "the headers waited for the answer");
			assert.match(body, /computed quiet/);
		});

	test("an unknown resource: -32602 at 2026-07-28, -32002 as before for older clients",
		async () => {
			const uri = "test://no-such-resource";
			const r = await rpc("resources/read", { uri });
			assert.equal(r.msg.error.code, -32602);
			assert.equal(r.msg.error.data.uri, uri);
			const old = new RawClient(g.url, TOKEN);
			await old.initialize("2025-11-25");
			const o = await old.request("resources/read", { uri });
			assert.equal(o.error.code, -32002);
			const sub = await rpc("resources/subscribe", { uri: "test://static-text" });
			assert.equal(sub.status, 404, "subscriptions/listen replaced it");
			assert.equal(sub.msg.error.code, -32601);
			const os = await old.request("resources/subscribe", { uri: "test://static-text" });
			assert.deepEqual(os.result, {});
		});
});
