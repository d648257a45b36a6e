// Load benchmark: mcp-gateway against a gateway built on the official TypeScript SDK's own
// streamable-HTTP server, both in front of the same stdio upstream (fake-server.mjs). For 50,
// 100 and 200 concurrent clients (one session each) every client makes CALLS tools/call
// requests back to back; prints calls/s, p50 and p99 latency and the ratio. Bounded: at most
// 200 x CALLS calls per run, loopback only. Run: GW_BIN=<build>/gateway/mcp-gateway \
//   node tests/gateway/bench.mjs   (after npm ci --prefix tests/gateway)

import { spawn } from "node:child_process";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { FAKE, NODE, fakeCmd, freePort, serve, sleep, tmpdir } from "./lib.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CALLS = Number(process.env.BENCH_CALLS || 20);
const CLIENTS = (process.env.BENCH_CLIENTS || "50,100,200").split(",").map(Number);
const TOKEN = "bench-token";
const agent = new http.Agent({ keepAlive: true, maxSockets: 1000 });

function post(port, body, session) {
	return new Promise((resolve, reject) => {
		const headers = { "Content-Type": "application/json", Authorization: `Bearer ${TOKEN}`,
			Accept: "application/json, text/event-stream" };
		if (session)
			headers["Mcp-Session-Id"] = session;
		const req = http.request({ host: "127.0.0.1", port, path: "/mcp", method: "POST",
			headers, agent }, (res) => {
			let data = "";
			res.on("data", (d) => (data += d));
			res.on("end", () => resolve({ status: res.statusCode, data,
				session: res.headers["mcp-session-id"] }));
		});
		req.on("error", reject);
		req.end(JSON.stringify(body));
	});
}

async function session(port) {
	const r = await post(port, { jsonrpc: "2.0", id: 0, method: "initialize", params: {
		protocolVersion: "2025-06-18", capabilities: {},
		clientInfo: { name: "bench", version: "0" } } });
	if (r.status !== 200 || !r.session)
		throw new Error(`initialize: ${r.status} ${r.data}`);
	await post(port, { jsonrpc: "2.0", method: "notifications/initialized" }, r.session);
	return r.session;
}

async function load(port, clients) {
	const sessions = await Promise.all(Array.from({ length: clients }, () => session(port)));
	const lat = [];
	const t0 = process.hrtime.bigint();
	await Promise.all(sessions.map(async (s, c) => {
		for (let i = 1; i <= CALLS; i++) {
			const t = process.hrtime.bigint();
			const r = await post(port, { jsonrpc: "2.0", id: i, method: "tools/call",
				params: { name: "echo", arguments: { text: `c${c}-${i}` } } }, s);
			if (r.status !== 200 || !r.data.includes(`c${c}-${i}`))
				throw new Error(`call: ${r.status} ${r.data.slice(0, 200)}`);
			lat.push(Number(process.hrtime.bigint() - t) / 1e6);
		}
	}));
	const secs = Number(process.hrtime.bigint() - t0) / 1e9;
	lat.sort((a, b) => a - b);
	const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))];
	return { rate: lat.length / secs, p50: q(0.5), p99: q(0.99) };
}

async function sdkServer(port) {
	const p = spawn(NODE, [path.join(HERE, "bench-sdk-server.mjs")], {
		env: { ...process.env, PORT: String(port), BENCH_UPSTREAM: FAKE },
		stdio: ["ignore", "inherit", "inherit"] });
	for (let i = 0; i < 200; i++) {
		try {
			await session(port);
			return p;
		} catch {}
		await sleep(50);
	}
	p.kill("SIGKILL");
	throw new Error("SDK server did not come up");
}

const dir = tmpdir("gw-bench");
const gport = await freePort();
const g = await serve({ alpha: { runCmd: fakeCmd("alpha") } }, { dir, port: gport,
	token: TOKEN });
const sport = await freePort();
const sdk = await sdkServer(sport);
const fmt = (n, d = 0) => n.toFixed(d).padStart(8);
try {
	// Warm-up, not counted: the SDK server runs on a JIT that needs it more than C does.
	await load(gport, 50);
	await load(sport, 50);
	console.log(`calls per client: ${CALLS}; upstream: fake-server.mjs over stdio; ` +
		"after one uncounted warm-up round each");
	console.log("clients  server          calls/s   p50 ms   p99 ms");
	for (const n of CLIENTS) {
		const a = await load(gport, n);
		const b = await load(sport, n);
		console.log(`${String(n).padStart(7)}  mcp-gateway  ${fmt(a.rate)} ${fmt(a.p50, 1)} ` +
			`${fmt(a.p99, 1)}`);
		console.log(`${String(n).padStart(7)}  SDK server   ${fmt(b.rate)} ${fmt(b.p50, 1)} ` +
			`${fmt(b.p99, 1)}`);
		console.log(`${String(n).padStart(7)}  ratio        ${fmt(a.rate / b.rate, 2)}x`);
	}
} finally {
	sdk.kill("SIGTERM");
	await g.stop();
	agent.destroy();
}
