// The comparison point for bench.mjs: a gateway made of the official TypeScript SDK's own
// pieces, a stateful StreamableHTTPServerTransport per session in front of one stdio Client
// to the upstream, relaying tools/list and tools/call. PORT and BENCH_UPSTREAM (a stdio
// server script) come from the environment.
import http from "node:http";
import { randomUUID } from "node:crypto";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from
	"@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from
	"@modelcontextprotocol/sdk/types.js";

const upstream = new Client({ name: "bench-sdk", version: "0" });
await upstream.connect(new StdioClientTransport({ command: process.execPath,
	args: [process.env.BENCH_UPSTREAM], env: { ...process.env, CUBE_MCP_FAKE_NAME: "alpha" },
	stderr: "ignore" }));
const transports = new Map();

function newServer() {
	const s = new Server({ name: "bench-sdk", version: "0" }, { capabilities: { tools: {} } });
	s.setRequestHandler(ListToolsRequestSchema, () => upstream.listTools());
	s.setRequestHandler(CallToolRequestSchema, (req) => upstream.callTool(req.params));
	return s;
}

http.createServer(async (req, res) => {
	let body = "";
	for await (const chunk of req)
		body += chunk;
	const msg = body ? JSON.parse(body) : undefined;
	const sid = req.headers["mcp-session-id"];
	let t = sid && transports.get(sid);
	if (!t) {
		t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(),
			onsessioninitialized: (id) => transports.set(id, t) });
		await newServer().connect(t);
	}
	await t.handleRequest(req, res, msg);
}).listen(Number(process.env.PORT), "127.0.0.1");
