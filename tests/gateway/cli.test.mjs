// Acceptance cases 1-9 (behaviour notes §11, "CLI / launcher") plus flag handling.

import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { test } from "node:test";

import { RawClient, TEST_DIR, alive, fakeCmd, freePort, health, launch, paths, run, serve, shq,
	sleep,
	stop, tmpdir } from "./lib.mjs";

test("1: launch, token file, no leaks into serve, MCP calls, second launch refused",
	async () => {
	const dir = tmpdir();
	const port = await freePort();
	const cfg = { alpha: { runCmd: fakeCmd("alpha"), envs: { FAKE_SECRET: "alpha-secret" } } };
	const r = await launch(cfg, { dir, port, token: "launch-token" });
	try {
		assert.equal(r.code, 0, r.stderr);
		assert.match(r.stdout, new RegExp(`ready on port ${port}`));
		const p = paths(dir);
		assert.equal(fs.readFileSync(p.token, "utf8"), "launch-token");
		assert.equal(fs.statSync(p.token).mode & 0o777, 0o600);
		assert.equal(fs.statSync(path.dirname(p.token)).mode & 0o777, 0o700);
		assert.ok(r.pid && alive(r.pid), "serve alive per PID file");
		const cmdline = fs.readFileSync(`/proc/${r.pid}/cmdline`, "latin1");
		const environ = fs.readFileSync(`/proc/${r.pid}/environ`, "latin1");
		assert.match(cmdline, /serve/);
		for (const secret of ["launch-token", "alpha-secret"]) {
			assert.ok(!cmdline.includes(secret), `cmdline has ${secret}`);
			assert.ok(!environ.includes(secret), `environ has ${secret}`);
		}
		assert.ok(!environ.includes("GATEWAY_ACCESS_TOKEN"), "token variable present");
		// Only the log, the socket and pipes: nothing of the launcher's leaked.
		const fds = fs.readdirSync(`/proc/${r.pid}/fd`).map((fd) =>
			fs.readlinkSync(`/proc/${r.pid}/fd/${fd}`));
		assert.ok(!fds.some((l) => l.includes(p.token)), "token file held open");

		const c = new RawClient(`http://127.0.0.1:${port}/mcp`, "launch-token");
		await c.initialize();
		assert.equal(await c.callText("echo", { text: "ping" }), "alpha:ping");
		assert.equal(await c.callText("alpha_env", {}), "secret=alpha-secret token=false");

		const port2 = await freePort();
		const r2 = await launch(cfg, { dir, port: port2, token: "other" });
		assert.notEqual(r2.code, 0);
		assert.match(r2.stderr, /already running/);
		assert.equal(fs.readFileSync(p.token, "utf8"), "launch-token", "token untouched");
	} finally {
		await stop(r.pid);
	}
	assert.ok(!fs.existsSync(paths(dir).pid), "PID file removed on SIGTERM");
	assert.ok(fs.existsSync(paths(dir).token), "token kept on shutdown");
});

test("2: empty GATEWAY_ACCESS_TOKEN generates a 64-hex token", async () => {
	const dir = tmpdir();
	const port = await freePort();
	const r = await launch({ alpha: { runCmd: fakeCmd("alpha") } }, { dir, port, token: "" });
	try {
		assert.equal(r.code, 0, r.stderr);
		const tok = fs.readFileSync(paths(dir).token, "utf8");
		assert.match(tok, /^[0-9a-f]{64}$/);
		const c = new RawClient(`http://127.0.0.1:${port}/mcp`, tok);
		await c.initialize();
		assert.equal(await c.callText("echo", { text: "x" }), "alpha:x");
		const bad = new RawClient(`http://127.0.0.1:${port}/mcp`, "");
		const denied = await bad.post({ jsonrpc: "2.0", id: 1, method: "ping" });
		assert.equal(denied.status, 401);
	} finally {
		await stop(r.pid);
	}
});

// The launcher hands --allowed-hosts and --allowed-origins to serve.
test("2b: --allowed-hosts and --allowed-origins reach serve", async () => {
	const dir = tmpdir();
	const port = await freePort();
	const r = await launch({ alpha: { runCmd: fakeCmd("alpha") } }, { dir, port, token: "h-tok",
		extra: ["--allowed-hosts", "mcp.example.org", "--allowed-origins",
			"https://app.example.org"] });
	try {
		assert.equal(r.code, 0, r.stderr);
		const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {
			protocolVersion: "2025-06-18", capabilities: {},
			clientInfo: { name: "h", version: "0" } } });
		const status = (headers) => new Promise((resolve, reject) => {
			const req = http.request({ host: "127.0.0.1", port, path: "/mcp", method: "POST",
				headers: { "Content-Type": "application/json", Authorization: "Bearer h-tok",
					Accept: "application/json, text/event-stream", ...headers } }, (res) => {
				res.resume();
				resolve(res.statusCode);
			});
			req.on("error", reject);
			req.end(init);
		});
		assert.equal(await status({ Host: "mcp.example.org" }), 200);
		assert.equal(await status({ Host: "other.example.org" }), 403);
		assert.equal(await status({ Origin: "https://app.example.org" }), 200);
		assert.equal(await status({ Origin: "https://other.example.org" }), 403);
	} finally {
		await stop(r.pid);
	}
});

test("3: a server that fails fails the launch, with its stderr, and cleans up", async () => {
	const dir = tmpdir();
	const port = await freePort();
	const r = await launch({ broken: { runCmd: "echo exploded >&2; exit 5" } },
		{ dir, port, token: "t3" });
	assert.equal(r.code, 1);
	assert.match(r.stderr, /"broken"/);
	assert.match(r.stderr, /exploded/);
	assert.match(r.stderr, /^mcp-gateway: /);
	assert.ok(!fs.existsSync(paths(dir).token), "token file removed");
	assert.equal(r.pid, null, "no PID file");
	const h = await health(port).catch(() => null);
	assert.equal(h, null, "nothing listens");
});

test("4: startup timeout", async () => {
	const dir = tmpdir();
	const port = await freePort();
	const r = await launch({ slow: { runCmd: "sleep 30" } }, { dir, port, token: "t4",
		timeout: "1s" });
	assert.equal(r.code, 1);
	assert.match(r.stderr, /timed out after 1s/);
	assert.match(r.stderr, /mcp-gateway pull/);
	assert.ok(r.ms < 10000, `took ${r.ms} ms`);
	assert.ok(!fs.existsSync(paths(dir).token));
});

test("5: a backgrounded install process dies with a timed-out launch", async () => {
	const dir = tmpdir();
	const port = await freePort();
	// The install runs as the server's user, in its HOME.
	const pidFile = path.join(paths(dir).home, "inst", "sleep.pid");
	const r = await launch({ inst: { installCmd: `sleep 300 & echo $! > sleep.pid`,
		runCmd: "true" } }, { dir, port, token: "t5", timeout: "1s" });
	assert.equal(r.code, 1);
	assert.match(r.stderr, /timed out/);
	const pid = Number(fs.readFileSync(pidFile, "utf8").trim());
	assert.ok(pid > 0);
	let gone = false;
	for (let i = 0; i < 50 && !gone; i++) {
		gone = !alive(pid);
		if (!gone)
			await sleep(100);
	}
	if (!gone)
		process.kill(pid, "SIGKILL");
	assert.ok(gone, "sleep 300 survived");
});

test("6: the ready pipe is not inherited by installs (fd 3)", async () => {
	const dir = tmpdir();
	const port = await freePort();
	const marker = path.join(dir, "fd3-was-a-pipe");
	const r = await launch({ alpha: { installCmd: `[ -p /dev/fd/3 ] && touch ${shq(marker)}; ` +
		`ls -l /proc/self/fd/ >&2; true`, runCmd: fakeCmd("alpha") } },
		{ dir, port, token: "t6" });
	try {
		assert.equal(r.code, 0, r.stderr);
		assert.ok(!fs.existsSync(marker), "install saw a pipe at fd 3");
		// The install's listing is in the log, prefixed; only 0-2 (+ ls's own dir fd).
		const log = fs.readFileSync(paths(dir).log, "utf8");
		assert.match(log, /\[alpha\] /);
		const fdLines = log.split("\n").filter((l) => /^\[alpha\] .* \d+ -> /.test(l));
		const fds = fdLines.map((l) => Number(l.match(/ (\d+) -> /)[1]));
		assert.ok(fds.length >= 3 && fds.every((fd) => fd <= 3), `fds ${fds}`);
	} finally {
		await stop(r.pid);
	}
});

test("7: invalid input fails before anything is written", async () => {
	const dir = tmpdir();
	const port = await freePort();
	const p = paths(dir);
	let r = await launch("not json", { dir, port, token: "t7" });
	assert.equal(r.code, 1);
	assert.match(r.stderr, /JSON object/);
	r = await launch({ "unknown-x": {} }, { dir, port, token: "t7" });
	assert.equal(r.code, 1);
	assert.match(r.stderr, /unknown MCP server "unknown-x"/);
	r = await run(["--log-file", p.log, "--token-file", p.token, "--pid-file", p.pid]);
	assert.equal(r.code, 1);
	assert.match(r.stderr, /--config is required/);
	r = await run(["--config", "{}", "--config-file", "/x", "--log-file", p.log,
		"--token-file", p.token]);
	assert.equal(r.code, 1);
	assert.match(r.stderr, /mutually exclusive/);
	r = await run(["--config-file", path.join(dir, "missing.json"), "--log-file", p.log,
		"--token-file", p.token]);
	assert.equal(r.code, 1);
	assert.match(r.stderr, /open .*missing\.json: no such file or directory/);
	r = await launch({ filesystem: {} }, { dir, port, token: "t7" });
	assert.match(r.stderr, /property "paths" is required/);
	assert.ok(!fs.existsSync(p.log), "log file created");
	assert.ok(!fs.existsSync(p.token), "token file created");
	assert.ok(!fs.existsSync(p.pid), "pid file created");
});

test("7b: flags follow Go semantics", async () => {
	const dir = tmpdir();
	const p = paths(dir);
	let r = await run(["-h"]);
	assert.equal(r.code, 2);
	assert.match(r.stderr, /-startup-timeout/);
	r = await run(["serve", "--help"]);
	assert.equal(r.code, 2);
	r = await run(["--bogus"]);
	assert.equal(r.code, 1);
	assert.match(r.stderr, /mcp-gateway: flag provided but not defined: -bogus/);
	r = await run(["--startup-timeout", "abc", "--config", "{}"]);
	assert.equal(r.code, 1);
	assert.match(r.stderr, /invalid value "abc" for flag -startup-timeout/);
	r = await run(["-startup-timeout=10", "--config", "{}"]);
	assert.equal(r.code, 1, "bare number is not a duration");
	r = await run(["serve", "--busy-poll", "1s", "--config", "{}"]);
	assert.equal(r.code, 1);
	assert.match(r.stderr, /--busy-poll must be between 0 and 10ms/);
	r = await run(["version"]);
	assert.equal(r.code, 0);
	assert.match(r.stdout, /^\S+\n$/);
	// -name=value and --name value both work; warnings for unknown properties are printed.
	const port = await freePort();
	r = await run([`-config={"alpha":{"runCmd":${JSON.stringify(fakeCmd("alpha"))},` +
		`"futureOption":1}}`, "--port", String(port), `-token-file=${p.token}`,
		"-pid-file", p.pid, "--log-file", p.log, "--catalog-file", p.catalog,
		"--servers-dir", p.servers, "--servers-home", p.home,
		"--server-read-paths", TEST_DIR, "--audit-log", p.audit],
		{ env: { GATEWAY_ACCESS_TOKEN: "t7b" } });
	try {
		assert.equal(r.code, 0, r.stderr);
		assert.match(r.stderr,
			/warning: mcp server "alpha": ignoring unknown property "futureOption"/);
	} finally {
		await stop(fs.existsSync(p.pid) ? Number(fs.readFileSync(p.pid, "utf8")) : null);
	}
});

test("8: serve in the foreground", async () => {
	const dir = tmpdir();
	const port = await freePort();
	const g = await serve({ alpha: { runCmd: fakeCmd("alpha") } }, { dir, port,
		token: "fg-token" });
	try {
		const h = await health(port);
		assert.equal(h.status, 200);
		const c = new RawClient(g.url, "fg-token");
		await c.initialize();
		assert.equal(await c.callText("echo", { text: "x" }), "alpha:x");
		const environ = fs.readFileSync(`/proc/${g.pid}/environ`, "latin1");
		assert.ok(!environ.includes("fg-token"), "token left in serve's environ");
	} finally {
		await g.stop();
	}
	assert.equal(await g.exited, 0, "SIGTERM exits 0");
	// Without the token variable serve refuses to start.
	const r = await run(["serve", "--config", "{}", "--pid-file", ""],
		{ env: { GATEWAY_ACCESS_TOKEN: undefined } });
	assert.equal(r.code, 1);
	assert.match(r.stderr, /GATEWAY_ACCESS_TOKEN must be set/);
});

test("8b: serve reports a busy port", async () => {
	const dir = tmpdir();
	const port = await freePort();
	const g = await serve({}, { dir, port });
	try {
		const r = await run(["serve", "--config", "{}", "--port", String(port),
			"--pid-file", ""], { env: { GATEWAY_ACCESS_TOKEN: "x" } });
		assert.equal(r.code, 1);
		assert.match(r.stderr, /address already in use/i);
		const h = JSON.parse((await health(port)).text);
		assert.deepEqual(h.isolation.servers, {});
		delete h.isolation;
		assert.deepEqual(h, { prompts: 0, resourceTemplates: 0, resources: 0, servers: [],
			status: "ok", tools: 0 });
	} finally {
		await g.stop();
	}
});

test("9: pull and catalog with an override catalog", async () => {
	const dir = tmpdir();
	const cat = path.join(dir, "catalog.json");
	const marker = path.join(dir, "pulled");
	fs.writeFileSync(cat, JSON.stringify({
		local: { description: "Local one.", command: [["true"]],
			install: [["touch", marker]] },
		bare: { command: [["true"]] },
		failing: { command: [["true"]], install: [["sh", "-c", "exit 6"]] },
	}));
	let r = await run(["pull", "--catalog-file", cat, "--servers-home", path.join(dir, "home"),
		"local", "bare"]);
	assert.equal(r.code, 0, r.stderr);
	assert.ok(fs.existsSync(marker), "install did not run");
	assert.match(r.stdout, new RegExp(`local: touch ${marker}`));
	assert.match(r.stdout, /bare: nothing to pull/);
	r = await run(["pull", "--catalog-file", cat, "nope"]);
	assert.equal(r.code, 1);
	assert.match(r.stderr,
		/unknown MCP server "nope"; supported servers: arxiv, bare, duckduckgo/);
	r = await run(["pull", "--catalog-file", cat, "--servers-home", path.join(dir, "home"),
		"failing"]);
	assert.equal(r.code, 1);
	assert.match(r.stderr, /pull failing: exit status 6/);
	r = await run(["pull", "--catalog-file", cat]);
	assert.equal(r.code, 1);
	assert.match(r.stderr, /usage: mcp-gateway pull <server>\.\.\./);
	r = await run(["catalog", "--catalog-file", cat]);
	assert.equal(r.code, 0, r.stderr);
	assert.match(r.stdout, /^duckduckgo {11}Web search through DuckDuckGo\.$/m);
	assert.match(r.stdout, /^local {16}Local one\.$/m);
	const names = r.stdout.trim().split("\n").map((l) => l.split(" ")[0]);
	assert.deepEqual(names, [...names].sort());
	assert.ok(names.includes("bare") && names.includes("memory"));
	// A broken override is reported with its path.
	fs.writeFileSync(cat, JSON.stringify({ bad: { command: [] } }));
	r = await run(["catalog", "--catalog-file", cat]);
	assert.equal(r.code, 1);
	assert.match(r.stderr, /catalog .*catalog\.json: server "bad": command is empty/);
});
