#!/usr/bin/env node
// A hostile stdio MCP server for the gateway abuse tests (issue 7). It completes the handshake
// and lists its tools, then misbehaves per tool:
//   garbage  - writes non-JSON, binary, arrays, responses to ids never asked and a server
//              request of an unknown method before the real answer
//   silent   - never answers
//   hugeline - writes a 100 MiB line (never ending in a newline until it is all out)
//   probe    - answers with its argv, and whether the gateway token is anywhere in its env
//   echo     - behaves
//   cancelled - answers with the request ids of the notifications/cancelled it received
//   deaf     - closes its stdin, then answers, and lives on with its stdout open: the
//              gateway's next write to it fails
// Env: HOSTILE_TOKEN_FILE names a file holding the token to look for (a file, so the token
// appears in no command line of the test itself).

import fs from "node:fs";
import { createInterface } from "node:readline";

const cancelled = [];
const tools = ["garbage", "silent", "hugeline", "probe", "echo", "cancelled", "deaf"].map((name) => ({
	name, description: name, inputSchema: { type: "object" } }));

function send(msg) {
	process.stdout.write(JSON.stringify(msg) + "\n");
}

function text(t) {
	return { content: [{ type: "text", text: t }] };
}

async function hugeLine(id) {
	const chunk = Buffer.alloc(1 << 20, 0x41);
	process.stdout.write(`{"jsonrpc":"2.0","id":${id},"result":{"x":"`);
	for (let i = 0; i < 100; i++) {
		if (!process.stdout.write(chunk))
			await new Promise((r) => process.stdout.once("drain", r));
	}
	process.stdout.write("\"}}\n");
}

function call(msg) {
	const { id } = msg;
	const name = msg.params?.name;
	switch (name) {
	case "garbage":
		process.stdout.write("this is not json\n\u0000\u0001\u0002\n[1,2,3]\n\"str\"\n");
		process.stdout.write("{\"jsonrpc\":\"2.0\",\"id\":999999,\"result\":{}}\n");
		send({ jsonrpc: "2.0", id: "x", method: "evil/method" });
		// The right id in a line that is not JSON: must not be taken as the answer.
		process.stdout.write(`{"jsonrpc":"2.0","id":${id},"result":\n\n{"truncated":\n`);
		send({ jsonrpc: "2.0", id, result: text("garbage:ok") });
		return;
	case "silent":
		return;
	case "hugeline":
		hugeLine(id);
		return;
	case "probe": {
		const tok = fs.readFileSync(process.env.HOSTILE_TOKEN_FILE, "utf8").trim();
		const inEnv = Object.entries(process.env).some(([k, v]) =>
			v.includes(tok) || k.includes(tok));
		send({ jsonrpc: "2.0", id, result: text(JSON.stringify({
			argv: process.argv, tokenInEnv: tok !== "" && inEnv,
			gatewayVar: "GATEWAY_ACCESS_TOKEN" in process.env })) });
		return;
	}
	case "cancelled":
		send({ jsonrpc: "2.0", id, result: text(JSON.stringify(cancelled)) });
		return;
	case "deaf":
		rl.removeAllListeners("close");
		rl.close();
		process.stdin.destroy();	// node keeps fd 0 open for that: close it
		fs.closeSync(0);
		setInterval(() => {}, 1000);
		send({ jsonrpc: "2.0", id, result: text("deaf:ok") });
		return;
	case "echo":
		send({ jsonrpc: "2.0", id,
			result: text("hostile:" + (msg.params.arguments?.text ?? "")) });
		return;
	default:
		send({ jsonrpc: "2.0", id, error: { code: -32602, message: "no such tool" } });
	}
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
	if (!line.trim())
		return;
	const msg = JSON.parse(line);
	if (msg.method === "notifications/cancelled")
		cancelled.push(msg.params?.requestId);
	if (msg.id === undefined || msg.method === undefined)
		return;
	switch (msg.method) {
	case "initialize":
		send({ jsonrpc: "2.0", id: msg.id, result: { protocolVersion:
			msg.params.protocolVersion, capabilities: { tools: {} },
			serverInfo: { name: "hostile", version: "1" } } });
		return;
	case "tools/list":
		send({ jsonrpc: "2.0", id: msg.id, result: { tools } });
		return;
	case "tools/call":
		call(msg);
		return;
	default:
		send({ jsonrpc: "2.0", id: msg.id, result: {} });
	}
});
rl.on("close", () => process.exit(0));
