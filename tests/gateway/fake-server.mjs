#!/usr/bin/env node
// A stdio MCP server for the gateway tests (behaviour notes §10). Plain newline-delimited
// JSON-RPC without the SDK, so the acceptance tests need no npm install.
//
// Env: CUBE_MCP_FAKE_NAME=<name> names it; tools: echo, <name>_env, <name>_crash, plus
// test helpers big (a large text result), sleep (answers after ms), roundtrip (asks the
// client for ping and roots/list before answering), steps (progress n times, ms apart).
// FAKE_PROTOCOL overrides the protocolVersion it answers; FAKE_TOOLS_PAGE=n paginates
// tools/list; FAKE_BANNER=1 writes to stderr at start; FAKE_READ=1 adds read (a file's
// length, or the error code reading it gives).

import fs from "node:fs";
import { createInterface } from "node:readline";

const name = process.env.CUBE_MCP_FAKE_NAME || "fake";
const pageSize = Number(process.env.FAKE_TOOLS_PAGE || 0);
const tools = [
	{ name: "echo", description: "echo text", inputSchema: { type: "object",
		properties: { text: { type: "string" } } } },
	{ name: `${name}_env`, description: "environment probe", inputSchema: { type: "object" } },
	{ name: `${name}_crash`, description: "exit with status 3",
		inputSchema: { type: "object" } },
	{ name: "big", description: "large result", inputSchema: { type: "object",
		properties: { bytes: { type: "number" } } } },
	{ name: "sleep", description: "answer late", inputSchema: { type: "object",
		properties: { ms: { type: "number" } } } },
	{ name: "roundtrip", description: "server-to-client requests", inputSchema: {
		type: "object" } },
	{ name: "steps", description: "progress every ms, n times, then the answer",
		inputSchema: { type: "object", properties: { n: { type: "number" },
			ms: { type: "number" } } } },
];
if (process.env.FAKE_READ)
	tools.push({ name: "read", description: "read a file", inputSchema: { type: "object",
		properties: { path: { type: "string" } } } });
// FAKE_GEN_FILE: each start counts up a number in that file and lists a tool gen<number>, so
// a restarted server has another tool list; grow adds a tool and says its list changed.
if (process.env.FAKE_GEN_FILE) {
	let n = 0;
	try {
		n = Number(fs.readFileSync(process.env.FAKE_GEN_FILE, "utf8")) || 0;
	} catch {}
	fs.writeFileSync(process.env.FAKE_GEN_FILE, String(n + 1));
	tools.push({ name: `gen${n + 1}`, inputSchema: { type: "object" } });
	tools.push({ name: "grow", inputSchema: { type: "object" } });
}
// later: answers at once, then sends a log message that belongs to no request.
if (process.env.FAKE_LATER)
	tools.push({ name: "later", description: "a notification after the answer",
		inputSchema: { type: "object", properties: { text: { type: "string" } } } });
if (process.env.FAKE_BAD_SCHEMA)
	tools.push({ name: "badschema", inputSchema: { type: "string" } });
if (process.env.FAKE_NO_SCHEMA)
	tools.push({ name: "noschema" });
const visible = process.env.FAKE_MINIMAL ? tools.slice(0, 3) : tools;

let nextId = 1;
const waiting = new Map();

function send(msg) {
	process.stdout.write(JSON.stringify(msg) + "\n");
}

function ask(method, params) {
	const id = `srv-${nextId++}`;
	send({ jsonrpc: "2.0", id, method, params });
	return new Promise((resolve) => waiting.set(id, resolve));
}

function text(t) {
	return { content: [{ type: "text", text: t }] };
}

async function callTool(p) {
	const args = p.arguments || {};
	const token = p._meta?.progressToken;
	switch (p.name) {
	case "steps":
		for (let i = 1; i <= Number(args.n || 1); i++) {
			await new Promise((r) => setTimeout(r, Number(args.ms || 0)));
			if (token !== undefined)
				send({ jsonrpc: "2.0", method: "notifications/progress",
					params: { progressToken: token, progress: i, total: args.n } });
		}
		return text(`${name}:steps:${args.n}`);
	case "echo":
		return text(`${name}:${args.text}`);
	case "read":
		try {
			return text(`ok:${fs.readFileSync(String(args.path)).length}`);
		} catch (e) {
			return text(`err:${e.code}`);
		}
	case `${name}_env`:
		return text(`secret=${process.env.FAKE_SECRET || ""} token=` +
			`${"GATEWAY_ACCESS_TOKEN" in process.env}`);
	case `${name}_crash`:
		process.exit(3);
		break;
	case "big": {
		const n = Number(args.bytes || 1024);
		let s = "";
		const chunk = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+/";
		while (s.length < n)
			s += chunk;
		return text(s.slice(0, n));
	}
	case "sleep":
		await new Promise((r) => setTimeout(r, Number(args.ms || 0)));
		return text(`${name}:slept:${args.tag ?? ""}`);
	case "grow":
		tools.push({ name: `grown${tools.length}`, inputSchema: { type: "object" } });
		setTimeout(() => send({ jsonrpc: "2.0",
			method: "notifications/tools/list_changed" }), 50);
		return text("grown");
	case "later":
		setTimeout(() => send({ jsonrpc: "2.0", method: "notifications/message",
			params: { level: "warning", data: `later:${args.text}` } }), 100);
		return text("soon");
	case "roundtrip": {
		const ping = await ask("ping", {});
		const roots = await ask("roots/list", {});
		return text(JSON.stringify({ ping: ping.result, roots: roots.result,
			rootsError: roots.error }));
	}
	default:
		return null;
	}
}

async function handle(msg) {
	if (msg.method === undefined) {
		const w = waiting.get(msg.id);
		if (w) {
			waiting.delete(msg.id);
			w(msg);
		}
		return;
	}
	if (msg.id === undefined)
		return;
	const reply = (result) => send({ jsonrpc: "2.0", id: msg.id, result });
	const fail = (code, message) => send({ jsonrpc: "2.0", id: msg.id,
		error: { code, message } });
	switch (msg.method) {
	case "initialize":
		reply({ protocolVersion: process.env.FAKE_PROTOCOL || msg.params.protocolVersion,
			capabilities: { tools: {} }, serverInfo: { name, version: "1.0.0" } });
		return;
	case "ping":
		reply({});
		return;
	case "tools/list": {
		if (!pageSize) {
			reply({ tools: visible });
			return;
		}
		const off = Number(msg.params?.cursor || 0);
		const res = { tools: visible.slice(off, off + pageSize) };
		if (off + pageSize < visible.length)
			res.nextCursor = String(off + pageSize);
		reply(res);
		return;
	}
	case "tools/call": {
		const r = await callTool(msg.params);
		if (r === null)
			fail(-32602, `no such tool ${msg.params.name}`);
		else
			reply(r);
		return;
	}
	default:
		fail(-32601, "method not found");
	}
}

if (process.env.FAKE_BANNER)
	process.stderr.write(`${name} starting\npartial`);
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
	if (line.trim())
		handle(JSON.parse(line));
});
rl.on("close", () => process.exit(0));
