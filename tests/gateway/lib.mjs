// Helpers for the mcp-gateway tests: temp dirs, free loopback ports, starting serve or the
// launcher with every path redirected into a temp dir, a raw streamable-HTTP MCP client, and
// cleanup that kills only the processes these tests started (by PID / own process group).

import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

export const GW = process.env.GW_BIN;
export const FAKE = process.env.GW_FAKE;
export const NODE = process.execPath;
if (!GW || !FAKE)
	throw new Error("GW_BIN and GW_FAKE must be set (run through meson test)");

const tmpDirs = [];
const groups = new Set();	// pgids of serve processes we started (serve is a group leader)

function killGroups() {
	for (const g of groups) {
		try {
			process.kill(-g, "SIGKILL");
		} catch {}
	}
	groups.clear();
}

process.on("exit", () => {
	killGroups();
	for (const d of tmpDirs) {
		try {
			fs.rmSync(d, { recursive: true, force: true });
		} catch {}
	}
});
for (const sig of ["SIGINT", "SIGTERM"]) {
	process.on(sig, () => {
		killGroups();
		process.exit(1);
	});
}

// Searchable by others (0711): the servers' HOMEs are made inside, under their own users.
export function tmpdir(tag = "gw") {
	const d = fs.mkdtempSync(path.join(os.tmpdir(), `${tag}-`));
	fs.chmodSync(d, 0o711);
	tmpDirs.push(d);
	return d;
}

// What every server may read besides the system directories: our scripts and node_modules.
export const TEST_DIR = path.dirname(path.resolve(FAKE));

export async function freePort() {
	return new Promise((resolve, reject) => {
		const s = net.createServer();
		s.unref();
		s.on("error", reject);
		s.listen(0, "127.0.0.1", () => {
			const { port } = s.address();
			s.close(() => resolve(port));
		});
	});
}

export function sleep(ms) {
	return new Promise((r) => setTimeout(r, ms));
}

export function alive(pid) {
	try {
		process.kill(pid, 0);
	} catch {
		return false;
	}
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
		return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
	} catch {
		return false;
	}
}

// Processes below pid (children, grandchildren), from /proc.
export function descendants(pid) {
	const kids = new Map();
	for (const d of fs.readdirSync("/proc")) {
		if (!/^\d+$/.test(d))
			continue;
		try {
			const st = fs.readFileSync(`/proc/${d}/stat`, "utf8");
			const ppid = Number(st.slice(st.lastIndexOf(")") + 2).split(" ")[1]);
			if (!kids.has(ppid))
				kids.set(ppid, []);
			kids.get(ppid).push(Number(d));
		} catch {}
	}
	const out = [];
	const walk = (p) => {
		for (const k of kids.get(p) || []) {
			out.push(k);
			walk(k);
		}
	};
	walk(pid);
	return out;
}

// runCmd for the fake server; name and extra env go through the shell line.
export function fakeCmd(name, env = {}) {
	const vars = Object.entries({ CUBE_MCP_FAKE_SERVER: "1", CUBE_MCP_FAKE_NAME: name, ...env })
		.map(([k, v]) => `${k}=${shq(v)}`).join(" ");
	return `${vars} exec ${shq(NODE)} ${shq(FAKE)}`;
}

export function shq(s) {
	return `'${String(s).replace(/'/g, `'\\''`)}'`;
}

// Paths that keep the gateway away from /etc, /run and /var.
export function paths(dir) {
	return {
		token: path.join(dir, "etc", ".token"),
		pid: path.join(dir, "run", "mcp-gateway.pid"),
		log: path.join(dir, "log", "mcp-gateway.log"),
		audit: path.join(dir, "log", "audit.log"),
		catalog: path.join(dir, "catalog.json"),
		servers: path.join(dir, "servers"),
		home: path.join(dir, "home"),
	};
}

// --server-read-paths with more directories the servers may read besides ours.
export function readPaths(...dirs) {
	return ["--server-read-paths", [TEST_DIR, ...dirs].join(",")];
}

// Servers' HOMEs in the test's dir; they may read the test scripts (Landlock) unless the
// test is about what a server reads without that flag (testReads false).
function isoArgs(p, testReads = true) {
	return ["--servers-home", p.home, ...(testReads ? ["--server-read-paths", TEST_DIR] : []),
		"--audit-log", p.audit];
}

function childEnv(extra) {
	const env = { ...process.env };
	delete env.GATEWAY_ACCESS_TOKEN;
	for (const [k, v] of Object.entries(extra || {})) {
		if (v === undefined)
			delete env[k];
		else
			env[k] = v;
	}
	return env;
}

export function run(args, { env, timeout = 60000 } = {}) {
	return runProgram(GW, args, { env: childEnv(env), timeout });
}

// Any program to its end (killed after timeout ms): exit code, signal, output, duration.
export function runProgram(cmd, args, { env, cwd, timeout = 60000 } = {}) {
	return new Promise((resolve) => {
		const t0 = Date.now();
		const p = spawn(cmd, args, { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
		let stdout = "", stderr = "";
		p.stdout.on("data", (d) => (stdout += d));
		p.stderr.on("data", (d) => (stderr += d));
		const timer = setTimeout(() => p.kill("SIGKILL"), timeout);
		p.on("close", (code, signal) => {
			clearTimeout(timer);
			resolve({ code, signal, stdout, stderr, ms: Date.now() - t0 });
		});
	});
}

// The launcher, with every file redirected into dir; remembers the serve pid for cleanup.
// wrap: a command the launcher runs under (["setpriv", ...]).
export async function launch(config, { dir, port, token, timeout = "30s", extra = [],
	env = {}, wrap = null } = {}) {
	const p = paths(dir);
	const args = ["--config", typeof config === "string" ? config : JSON.stringify(config),
		"--port", String(port), "--startup-timeout", timeout, "--token-file", p.token,
		"--pid-file", p.pid, "--log-file", p.log, "--catalog-file", p.catalog,
		"--servers-dir", p.servers, ...isoArgs(p), ...extra];
	const renv = { env: childEnv({ ...env, GATEWAY_ACCESS_TOKEN: token }) };
	const r = wrap ? await runProgram(wrap[0], [...wrap.slice(1), GW, ...args], renv) :
		await run(args, { env: { ...env, GATEWAY_ACCESS_TOKEN: token } });
	r.pid = readPid(p.pid);
	if (r.pid)
		groups.add(r.pid);
	return r;
}

export function readPid(file) {
	try {
		const n = Number(fs.readFileSync(file, "utf8").trim());
		return n > 0 ? n : null;
	} catch {
		return null;
	}
}

// Stops a gateway we started: SIGTERM, then SIGKILL to its group after 8 s.
export async function stop(pid) {
	if (!pid)
		return;
	try {
		process.kill(pid, "SIGTERM");
	} catch {}
	for (let i = 0; i < 80 && alive(pid); i++)
		await sleep(100);
	try {
		process.kill(-pid, "SIGKILL");
	} catch {}
	groups.delete(pid);
}

// serve in the foreground (own process group so cleanup reaches the servers it spawned).
export async function serve(config, { dir, port, token = "tok", extra = [], env = {},
	wait = true, testReads = true } = {}) {
	const p = paths(dir);
	const logFd = fs.openSync(path.join(dir, "serve.log"), "w");
	const args = ["serve", "--config", typeof config === "string" ? config :
		JSON.stringify(config), "--port", String(port), "--pid-file", "",
		"--catalog-file", p.catalog, "--servers-dir", p.servers, ...isoArgs(p, testReads),
		...extra];
	const proc = spawn(GW, args, { env: childEnv({ ...env, GATEWAY_ACCESS_TOKEN: token }),
		stdio: ["ignore", logFd, logFd], detached: true });
	fs.closeSync(logFd);
	groups.add(proc.pid);
	const exited = new Promise((resolve) => proc.on("exit", (code) => resolve(code)));
	const g = {
		proc, pid: proc.pid, port, exited, url: `http://127.0.0.1:${port}/mcp`,
		log: () => fs.readFileSync(path.join(dir, "serve.log"), "utf8"),
		stop: async () => {
			if (proc.exitCode === null && proc.signalCode === null) {
				proc.kill("SIGTERM");
				const t = setTimeout(() => {
					try {
						process.kill(-proc.pid, "SIGKILL");
					} catch {}
				}, 8000);
				await exited;
				clearTimeout(t);
			}
			groups.delete(proc.pid);
		},
	};
	if (!wait)
		return g;
	let code = null;
	exited.then((c) => (code = c ?? -1));
	for (let i = 0; i < 300; i++) {
		if (code !== null)
			throw new Error(`serve exited with ${code}:\n${g.log()}`);
		try {
			const r = await fetch(`http://127.0.0.1:${port}/health`);
			if (r.status === 200)
				return g;
		} catch {}
		await sleep(50);
	}
	await g.stop();
	throw new Error(`serve did not come up:\n${g.log()}`);
}

export function parseBody(text, ctype) {
	if ((ctype || "").startsWith("text/event-stream")) {
		const data = text.split("\n").filter((l) => l.startsWith("data: "))
			.map((l) => l.slice(6));
		return data.length ? JSON.parse(data[data.length - 1]) : null;
	}
	if ((ctype || "").startsWith("application/json"))
		return JSON.parse(text);
	return null;
}

// A minimal streamable-HTTP client, so raw status codes and headers stay visible.
export class RawClient {
	constructor(url, token) {
		this.url = url;
		this.token = token;
		this.session = null;
		this.nextId = 1;
	}

	headers(extra = {}) {
		const h = { "Content-Type": "application/json",
			Accept: "application/json, text/event-stream" };
		if (this.token !== undefined)
			h.Authorization = `Bearer ${this.token}`;
		if (this.session)
			h["Mcp-Session-Id"] = this.session;
		return { ...h, ...extra };
	}

	async post(body, extraHeaders = {}) {
		const r = await fetch(this.url, { method: "POST",
			headers: this.headers(extraHeaders),
			body: typeof body === "string" ? body : JSON.stringify(body) });
		const text = await r.text();
		let json = null;
		try {
			json = parseBody(text, r.headers.get("content-type"));
		} catch {}
		return { status: r.status, headers: r.headers, text, json };
	}

	async request(method, params, extraHeaders) {
		const id = this.nextId++;
		const msg = { jsonrpc: "2.0", id, method };
		if (params !== undefined)
			msg.params = params;
		const r = await this.post(msg, extraHeaders);
		if (r.status !== 200)
			throw new Error(`${method}: HTTP ${r.status}: ${r.text}`);
		if (r.json?.id !== id)
			throw new Error(`${method}: bad response ${r.text}`);
		return r.json;
	}

	async initialize(version = "2025-06-18") {
		const id = this.nextId++;
		const r = await this.post({ jsonrpc: "2.0", id, method: "initialize", params: {
			protocolVersion: version, capabilities: {},
			clientInfo: { name: "gw-test", version: "0" } } });
		if (r.status !== 200)
			throw new Error(`initialize: HTTP ${r.status}: ${r.text}`);
		this.session = r.headers.get("mcp-session-id");
		this.protocol = r.json.result.protocolVersion;
		const n = await this.post({ jsonrpc: "2.0", method: "notifications/initialized" },
			{ "MCP-Protocol-Version": this.protocol });
		if (n.status !== 202)
			throw new Error(`initialized: HTTP ${n.status}`);
		return r;
	}

	async listTools() {
		const names = [];
		let cursor;
		do {
			const r = await this.request("tools/list", cursor ? { cursor } : {});
			if (r.error)
				throw new Error(JSON.stringify(r.error));
			names.push(...r.result.tools.map((t) => t.name));
			cursor = r.result.nextCursor;
		} while (cursor);
		return names;
	}

	// Returns the JSON-RPC message (result or error).
	async call(name, args) {
		return this.request("tools/call", { name, arguments: args });
	}

	async callText(name, args) {
		const r = await this.call(name, args);
		if (r.error)
			throw new Error(`${name}: ${JSON.stringify(r.error)}`);
		return r.result.content.map((c) => c.text).join("");
	}
}

export async function health(port) {
	const r = await fetch(`http://127.0.0.1:${port}/health`);
	return { status: r.status, ctype: r.headers.get("content-type"), text: await r.text() };
}
