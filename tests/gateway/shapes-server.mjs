#!/usr/bin/env node
// A stdio MCP server that answers a tools/call with whatever lines the call asks for, as raw
// bytes (gateway-answer, issue 37): the tool "raw" takes {lines: [...]} and writes each line
// with "@ID@" replaced by the request's id and "@FF@" by the byte 0xff (not UTF-8), then a
// newline. So a test can hand the gateway answers in any spelling, hostile ones included.
// "echo" behaves. It never sends anything of its own.

import { createInterface } from "node:readline";

const tools = ["raw", "echo"].map((name) => ({ name, description: name,
	inputSchema: { type: "object" } }));

function send(msg) {
	process.stdout.write(JSON.stringify(msg) + "\n");
}

function raw(id, lines) {
	for (const l of lines) {
		const parts = l.replaceAll("@ID@", String(id)).split("@FF@");
		const bufs = [];
		parts.forEach((p, i) => {
			if (i)
				bufs.push(Buffer.from([0xff]));
			bufs.push(Buffer.from(p, "utf8"));
		});
		bufs.push(Buffer.from("\n"));
		process.stdout.write(Buffer.concat(bufs));
	}
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
	if (!line.trim())
		return;
	const msg = JSON.parse(line);
	if (msg.id === undefined || msg.method === undefined)
		return;
	switch (msg.method) {
	case "initialize":
		send({ jsonrpc: "2.0", id: msg.id, result: { protocolVersion:
			msg.params.protocolVersion, capabilities: { tools: {} },
			serverInfo: { name: "shapes", version: "1" } } });
		return;
	case "tools/list":
		send({ jsonrpc: "2.0", id: msg.id, result: { tools } });
		return;
	case "tools/call":
		if (msg.params?.name === "raw")
			raw(msg.id, msg.params.arguments?.lines ?? []);
		else
			send({ jsonrpc: "2.0", id: msg.id, result: { content: [{ type: "text",
				text: "shapes:" + (msg.params?.arguments?.text ?? "") }] } });
		return;
	default:
		send({ jsonrpc: "2.0", id: msg.id, result: {} });
	}
});
rl.on("close", () => process.exit(0));
