// Real MCP servers from npm behind the gateway, driven by the official TypeScript SDK client
// (StreamableHTTPClientTransport). Packages are pinned in package-lock.json next to this file;
// install them with `npm ci --prefix tests/gateway`. Servers run from node_modules by local
// runCmd or an override catalog, so no network is needed at test time.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { before, test } from "node:test";

import { freePort, health, launch, paths, shq, stop, tmpdir } from "./lib.mjs";

const NM = process.env.GW_NODE_MODULES;
const pkg = (name) => path.join(NM, "@modelcontextprotocol", name, "dist", "index.js");
const MEMORY = pkg("server-memory");
const EVERYTHING = pkg("server-everything");
const FILESYSTEM = pkg("server-filesystem");
const MEMORY_TOOLS = ["add_observations", "create_entities", "create_relations",
	"delete_entities", "delete_observations", "delete_relations", "open_nodes", "read_graph",
	"search_nodes"];

let Client, StreamableHTTPClientTransport;

before(async () => {
	for (const f of [MEMORY, EVERYTHING, FILESYSTEM]) {
		if (!NM || !fs.existsSync(f))
			throw new Error(
				`${f} is missing: run "npm ci --prefix tests/gateway" first`);
	}
	({ Client } = await import("@modelcontextprotocol/sdk/client/index.js"));
	({ StreamableHTTPClientTransport } =
		await import("@modelcontextprotocol/sdk/client/streamableHttp.js"));
});

async function connect(port, token) {
	const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`),
		{ requestInit: { headers: { Authorization: `Bearer ${token}` } } });
	const client = new Client({ name: "gw-sdk-test", version: "0" });
	const errors = [];
	client.onerror = (e) => errors.push(e);
	await client.connect(transport);
	return { client, transport, errors };
}

async function allTools(client) {
	const names = [];
	let cursor;
	do {
		const r = await client.listTools(cursor ? { cursor } : {});
		names.push(...r.tools.map((t) => t.name));
		cursor = r.nextCursor;
	} while (cursor);
	return names;
}

const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("");

test("three real servers, a name clash, calls and /health through the SDK client", async () => {
	const dir = tmpdir("gw-sdk");
	const port = await freePort();
	const node = shq(process.execPath);
	const cfg = {
		// "mem" sorts before "mem2", so mem2's clashing tools become mem2_*.
		// Each writes its file in a directory declared as its own (made for its user).
		mem: { runCmd: `exec ${node} ${shq(MEMORY)}`, paths: [path.join(dir, "m1")],
			envs: { MEMORY_FILE_PATH: path.join(dir, "m1", "m.jsonl") } },
		mem2: { runCmd: `exec ${node} ${shq(MEMORY)}`, paths: [path.join(dir, "m2")],
			envs: { MEMORY_FILE_PATH: path.join(dir, "m2", "m.jsonl") } },
		everything: { runCmd: `exec ${node} ${shq(EVERYTHING)}` },
	};
	const t0 = Date.now();
	const r = await launch(cfg, { dir, port, token: "sdk-token" });
	console.log(`launch took ${Date.now() - t0} ms`);
	try {
		assert.equal(r.code, 0, r.stderr);
		const { client, transport, errors } = await connect(port, "sdk-token");
		assert.equal(client.getServerVersion().name, "cube-mcp-gateway");
		assert.equal(transport.protocolVersion, "2025-11-25");
		assert.ok(transport.sessionId);
		const names = await allTools(client);
		for (const t of MEMORY_TOOLS) {
			assert.ok(names.includes(t), `memory ${t}`);
			assert.ok(names.includes(`mem2_${t}`), `mem2_${t}`);
		}
		const renamed = names.filter((n) => n.startsWith("mem2_"));
		assert.equal(renamed.length, MEMORY_TOOLS.length);
		assert.ok(names.includes("echo"), "everything's echo");
		assert.ok(names.includes("get-sum"), "everything's get-sum");
		const everything = names.filter((n) => !MEMORY_TOOLS.includes(n) &&
			!n.startsWith("mem2_"));
		assert.ok(everything.length >= 10, `everything has ${everything.length} tools`);

		// Prompts and resources are aggregated too (memory has none, everything some).
		const prompts = (await client.listPrompts()).prompts;
		const resources = (await client.listResources()).resources;
		const templates = (await client.listResourceTemplates()).resourceTemplates;
		assert.ok(prompts.length > 0 && resources.length > 0, "everything's lists");
		const h = await health(port);
		const hb = JSON.parse(h.text);
		assert.deepEqual(Object.keys(hb.isolation.servers).sort(),
			["everything", "mem", "mem2"]);
		delete hb.isolation;
		assert.deepEqual(hb, { servers: ["everything", "mem", "mem2"],
			status: "ok", tools: names.length, prompts: prompts.length,
			resources: resources.length, resourceTemplates: templates.length });
		const read = await client.readResource({ uri: resources[0].uri });
		assert.equal(read.contents[0].uri, resources[0].uri);
		const p0 = prompts.find((p) => !(p.arguments || []).some((a) => a.required));
		const got = await client.getPrompt({ name: p0.name, arguments: {} });
		assert.ok(got.messages.length > 0, `prompt ${p0.name}`);

		assert.equal(text(await client.callTool({ name: "echo",
			arguments: { message: "hi" } })), "Echo: hi");
		const sum = await client.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } });
		assert.match(text(sum), /42/);
		await client.callTool({ name: "create_entities", arguments: { entities: [
			{ name: "gateway", entityType: "program",
				observations: ["written in C"] }] } });
		const g1 = await client.callTool({ name: "read_graph", arguments: {} });
		assert.match(text(g1), /written in C/);
		// The clash-renamed tool reaches the other memory server, whose graph is empty.
		const g2 = await client.callTool({ name: "mem2_read_graph", arguments: {} });
		assert.doesNotMatch(text(g2), /written in C/);
		assert.ok(fs.readFileSync(path.join(dir, "m1", "m.jsonl"), "utf8")
			.includes("gateway"));

		// Concurrent calls over separate SDK sessions.
		const more = await Promise.all([1, 2, 3, 4].map(() => connect(port, "sdk-token")));
		const outs = await Promise.all(more.flatMap(({ client: c }, i) => [
			c.callTool({ name: "echo", arguments: { message: `m${i}` } }),
			c.callTool({ name: "search_nodes", arguments: { query: "gateway" } }),
		]));
		outs.forEach((o, j) => {
			if (j % 2 === 0)
				assert.equal(text(o), `Echo: m${j / 2}`);
			else
				assert.match(text(o), /gateway/);
		});
		for (const m of more) {
			await m.transport.terminateSession();
			await m.client.close();
		}
		await assert.rejects(client.callTool({ name: "nope", arguments: {} }),
			/unknown tool/);
		await transport.terminateSession();
		await client.close();
		assert.deepEqual(errors, [], "client reported transport errors");
	} finally {
		await stop(r.pid);
	}
});

// server-everything's own tools for each kind of server-to-client traffic, through the gateway.
test("server-everything: progress, sampling, elicitation, roots round trips and roots/list_changed", async () => {
	const dir = tmpdir("gw-sdk");
	const port = await freePort();
	const r = await launch({ everything: { runCmd: `exec ${shq(process.execPath)} ` +
		shq(EVERYTHING) } }, { dir, port, token: "ev-token" });
	try {
		assert.equal(r.code, 0, r.stderr);
		const { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } =
			await import("@modelcontextprotocol/sdk/types.js");
		const transport = new StreamableHTTPClientTransport(
			new URL(`http://127.0.0.1:${port}/mcp`),
			{ requestInit: { headers: { Authorization: "Bearer ev-token" } } });
		const client = new Client({ name: "gw-sdk-ev", version: "0" },
			{ capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } });
		const asked = [];
		client.setRequestHandler(CreateMessageRequestSchema, (req) => {
			asked.push(req.params.messages[0].content.text);
			return { model: "gw-test", role: "assistant",
				content: { type: "text", text: "sampled by the test" } };
		});
		client.setRequestHandler(ElicitRequestSchema,
			() => ({ action: "accept", content: {} }));
		let root = "file:///gw-test-root";
		client.setRequestHandler(ListRootsRequestSchema,
			() => ({ roots: [{ uri: root, name: "test root" }] }));
		await client.connect(transport);
		const seen = [];
		await client.callTool({ name: "trigger-long-running-operation",
			arguments: { duration: 1, steps: 3 } }, undefined,
		{ onprogress: (p) => seen.push(p.progress) });
		assert.deepEqual(seen, [1, 2, 3]);
		const s = await client.callTool({ name: "trigger-sampling-request",
			arguments: { prompt: "through the gateway" } });
		assert.match(text(s), /sampled by the test/);
		assert.equal(asked.length, 1);
		assert.match(asked[0], /through the gateway/);
		const e = await client.callTool({ name: "trigger-elicitation-request", arguments: {} });
		assert.match(JSON.stringify(e), /accept/);
		const roots = await client.callTool({ name: "get-roots-list", arguments: {} });
		assert.match(text(roots), /gw-test-root/);
		// The client's roots change: server-everything hears roots/list_changed through the
		// gateway and lists them again, between calls (on the client's GET stream).
		root = "file:///gw-test-root-2";
		await client.sendRootsListChanged();
		let now = "";
		for (let i = 0; i < 30 && !now.includes("gw-test-root-2"); i++) {
			await new Promise((res) => setTimeout(res, 100));
			now = text(await client.callTool({ name: "get-roots-list", arguments: {} }));
		}
		assert.match(now, /gw-test-root-2/, "the server listed the roots again");
		await transport.terminateSession();
		await client.close();
	} finally {
		await stop(r.pid);
	}
});

test("catalog entries from the override file start real servers", async () => {
	const dir = tmpdir("gw-sdk");
	const port = await freePort();
	const shared = path.join(dir, "shared");
	fs.mkdirSync(shared);
	fs.writeFileSync(path.join(shared, "hello.txt"), "hello from the sandbox\n");
	fs.writeFileSync(paths(dir).catalog, JSON.stringify({
		fs: { description: "Filesystem from node_modules.",
			command: [[process.execPath, FILESYSTEM], ["{{paths}}"]],
			properties: { paths: { type: "array", required: true, writable: true } } },
		memory: { description: "Memory with a chosen file.",
			command: [[process.execPath, MEMORY]],
			env: { MEMORY_FILE_PATH: "{{file}}" },
			properties: { file: { type: "string", required: true } } },
	}));
	// In the memory server's own HOME, which is made for its user before it starts.
	const memFile = path.join(paths(dir).home, "memory", "catalog-mem.jsonl");
	const r = await launch({ fs: { paths: [shared] }, memory: { file: memFile } },
		{ dir, port, token: "cat-token" });
	try {
		assert.equal(r.code, 0, r.stderr);
		const { client, transport } = await connect(port, "cat-token");
		const names = await allTools(client);
		assert.ok(names.includes("read_text_file") || names.includes("read_file"), names);
		assert.ok(names.includes("create_entities"));
		const allowed = await client.callTool({ name: "list_allowed_directories",
			arguments: {} });
		assert.ok(text(allowed).includes(shared), text(allowed));
		const readTool = names.includes("read_text_file") ? "read_text_file" : "read_file";
		const read = await client.callTool({ name: readTool,
			arguments: { path: path.join(shared, "hello.txt") } });
		assert.match(text(read), /hello from the sandbox/);
		await client.callTool({ name: "create_entities", arguments: { entities: [
			{ name: "cat", entityType: "test", observations: ["x"] }] } });
		assert.ok(fs.existsSync(memFile), "catalog env template was not applied");
		await transport.terminateSession();
		await client.close();
	} finally {
		await stop(r.pid);
	}
});
