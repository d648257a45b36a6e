// Gateway abuse (issue 7): the token never leaks (log, children's env and argv), and a hostile
// upstream that writes garbage, never answers or sends a 100 MiB line stalls no other
// upstream and cannot make the gateway's memory grow with it.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { NODE, RawClient, descendants, fakeCmd, freePort, launch, readPaths, serve, shq, sleep,
	stop,
	tmpdir } from "./lib.mjs";

const HOSTILE = path.join(path.dirname(new URL(import.meta.url).pathname),
	"hostile-server.mjs");
const TOKEN = "tok-Very-Secret-4242";

// The token to look for, in a directory the server may read (hostileRead(dir)).
function hostileCmd(dir) {
	const shared = path.join(dir, "shared");
	fs.mkdirSync(shared, { recursive: true });
	const f = path.join(shared, "hostile-token");
	fs.writeFileSync(f, TOKEN, { mode: 0o644 });
	return `HOSTILE_TOKEN_FILE=${shq(f)} exec ${shq(NODE)} ${shq(HOSTILE)}`;
}

const hostileRead = (dir) => readPaths(path.join(dir, "shared"));

function vmKb(pid, field) {
	const re = new RegExp(`${field}:\\s+(\\d+)`);
	const m = fs.readFileSync(`/proc/${pid}/status`, "utf8").match(re);
	return m ? Number(m[1]) : 0;
}

// Tool names: beta sorts first and keeps "echo"; the hostile one's becomes "hostile_echo".
// Ten calls to the well-behaved server, each answered within 'ms'.
async function othersAnswer(c, ms) {
	for (let i = 0; i < 10; i++) {
		const t0 = Date.now();
		assert.equal(await c.callText("echo", { text: `b${i}` }), `beta:b${i}`);
		assert.ok(Date.now() - t0 < ms, `beta answered in ${Date.now() - t0} ms`);
	}
}

// The hostile server's echo once a call has started it again (up to 5 s).
async function restarted(c) {
	for (let i = 0; i < 50; i++) {
		const e = await c.call("hostile_echo", { text: "again" });
		if (e.result)
			return e.result.content[0].text;
		await sleep(100);
	}
	return null;
}

describe("a hostile upstream next to a well-behaved one", () => {
	let g, dir, c;

	before(async () => {
		dir = tmpdir();
		const port = await freePort();
		g = await serve({
			hostile: { runCmd: hostileCmd(dir) },
			beta: { runCmd: fakeCmd("beta") },
		}, { dir, port, token: TOKEN, extra: hostileRead(dir) });
		c = new RawClient(g.url, TOKEN);
		await c.initialize();
	});
	after(async () => {
		await g?.stop();
	});

	test("garbage lines around the answer: the answer still arrives, nothing else is taken",
		async () => {
			for (let i = 0; i < 5; i++)
				assert.equal(await c.callText("garbage", {}), "garbage:ok");
			await othersAnswer(c, 2000);
			assert.equal(await c.callText("hostile_echo", { text: "x" }), "hostile:x");
		});

	test("a server that never answers stalls no other server, nor its own other calls",
		async () => {
			const pending = [];
			for (let i = 0; i < 5; i++)
				pending.push(c.call("silent", {}).catch(() => null));
			await sleep(300);
			await othersAnswer(c, 2000);
			assert.equal(await c.callText("hostile_echo", { text: "still" }),
				"hostile:still");
			// The silent calls stay open; the gateway stops them at shutdown.
			assert.equal(pending.length, 5);
		});

	test("a 100 MiB line: the call fails clearly, memory stays bounded, others go on",
		async () => {
			const rssBefore = vmKb(g.pid, "VmRSS");
			const big = c.call("hugeline", {});
			const t0 = Date.now();
			await othersAnswer(c, 5000);
			const r = await big;
			assert.ok(r.error, `hugeline answered ${JSON.stringify(r).slice(0, 200)}`);
			assert.match(r.error.message, /longer than 32 MiB/);
			assert.ok(Date.now() - t0 < 30000, "failed within 30 s");
			const hwm = vmKb(g.pid, "VmHWM");
			// The framer keeps at most 32 MiB of one line; 100 MiB must never be held.
			assert.ok(hwm < rssBefore + 96 * 1024,
				`peak RSS ${hwm} kB (was ${rssBefore})`);
			// The next call starts the server again.
			assert.equal(await restarted(c), "hostile:again");
		});

	// The loop writes a turn's requests at its end: one that cannot be written (the server
	// closed its stdin but lives on) must still be answered, not wait for good.
	test("a server that stops reading its input: the next call fails, the one after restarts it",
		async () => {
			assert.equal(await c.callText("deaf", {}), "deaf:ok");
			await sleep(200);	// its stdin is closed for sure
			const t0 = Date.now();
			const r = await c.call("hostile_echo", { text: "lost" });
			assert.ok(r.error, `answered ${JSON.stringify(r).slice(0, 200)}`);
			assert.match(r.error.message, /server closed its input/);
			assert.ok(Date.now() - t0 < 10000, `failed after ${Date.now() - t0} ms`);
			assert.match(g.log(),
				/mcp server does not read its input; stopping it.*server=hostile/);
			assert.equal(await restarted(c), "hostile:again");
			await othersAnswer(c, 2000);
		});

	// A request's head (request line and headers) may take 8 KiB: 6 KiB of headers are
	// served, 9 KiB get 431, and the client's next request is served as before.
	test("request headers: 6 KiB served, 9 KiB refused with 431, the gateway goes on",
		async () => {
			const pad = (n) => "a".repeat(n);
			const ok = await c.post({ jsonrpc: "2.0", id: 901, method: "ping" },
				{ "X-Pad": pad(6 * 1024) });
			assert.equal(ok.status, 200, ok.text);
			const big = await c.post({ jsonrpc: "2.0", id: 902, method: "ping" },
				{ "X-Pad": pad(9 * 1024) });
			assert.equal(big.status, 431, big.text);
			assert.equal(await c.callText("echo", { text: "after" }), "beta:after");
		});

	test("the token is in no child's argv or environment, and never in the log", async () => {
		const probe = JSON.parse(await c.callText("probe", {}));
		assert.equal(probe.gatewayVar, false, "GATEWAY_ACCESS_TOKEN passed to a child");
		assert.equal(probe.tokenInEnv, false, "token value in a child's environment");
		assert.ok(!probe.argv.join(" ").includes(TOKEN), "token in a child's argv");
		// Every process below the gateway, from /proc, not only what the server says.
		const kids = descendants(g.pid);
		assert.ok(kids.length >= 2, `children ${kids}`);
		for (const k of kids) {
			let env = "", argv = "";
			try {
				env = fs.readFileSync(`/proc/${k}/environ`, "latin1");
				argv = fs.readFileSync(`/proc/${k}/cmdline`, "latin1");
			} catch {
				continue;
			}
			assert.ok(!env.includes(TOKEN), `token in the environment of ${k}`);
			assert.ok(!argv.includes(TOKEN), `token in the argv of ${k}`);
		}
		// Wrong tokens, a token in the URL, then the log: no token anywhere.
		const bad = new RawClient(g.url, TOKEN + "x");
		const denied = await bad.post({ jsonrpc: "2.0", id: 1, method: "ping" });
		assert.equal(denied.status, 401);
		const r = await fetch(`${g.url}?token=${TOKEN}`, { method: "POST" });
		assert.equal(r.status, 401);
		await r.text();
		assert.ok(!g.log().includes(TOKEN), "token in the gateway log");
	});
});

// --call-timeout, given to the launcher (which hands it to serve): a call the server never
// answers fails with a clear error after the timeout, the server is told to cancel it, and
// the server's other calls go on.
test("--call-timeout: an unanswered call fails in time, is cancelled upstream", async () => {
	const dir = tmpdir();
	const port = await freePort();
	const r = await launch({ hostile: { runCmd: hostileCmd(dir) } },
		{ dir, port, token: TOKEN,
			extra: ["--call-timeout", "1.5s", ...hostileRead(dir)] });
	try {
		assert.equal(r.code, 0, r.stderr);
		const c = new RawClient(`http://127.0.0.1:${port}/mcp`, TOKEN);
		await c.initialize();
		const t0 = Date.now();
		const res = await c.call("silent", {});
		const took = Date.now() - t0;
		assert.ok(res.error, `silent answered ${JSON.stringify(res).slice(0, 200)}`);
		assert.match(res.error.message, /did not answer tools\/call within 1\.5s/);
		assert.ok(took >= 1400 && took < 6000, `failed after ${took} ms`);
		// Quick calls are not affected, and the server heard the cancellation.
		assert.equal(await c.callText("echo", { text: "after" }), "hostile:after");
		const ids = JSON.parse(await c.callText("cancelled", {}));
		assert.equal(ids.length, 1, `cancelled ${JSON.stringify(ids)}`);
		assert.equal(typeof ids[0], "number");
	} finally {
		await stop(r.pid);
	}
});
