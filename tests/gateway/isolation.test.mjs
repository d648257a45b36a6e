// Issue 23: every MCP server in a trust domain of its own. A hostile server of ours
// (intruder-server.mjs, running gateway-attack) sits among normal ones and tries what the
// product's security notes say a server could do; each attempt must fail with the errno a
// user would see, and the other servers must keep serving. Real servers (server-everything,
// server-memory, server-filesystem, a package npx installs) keep working under their users.
// Landlock and cgroup v2 checks skip, with the reason, where the machine lacks them.

import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { NODE, RawClient, TEST_DIR, alive, descendants, fakeCmd, freePort, health, launch,
	paths, readPaths, readPid, run, runProgram, shq, sleep, stop, tmpdir } from "./lib.mjs";

const ATTACK = process.env.GW_ATTACK;
const NM = process.env.GW_NODE_MODULES;
const INTRUDER = path.join(TEST_DIR, "intruder-server.mjs");
const pkg = (name) => path.join(NM, "@modelcontextprotocol", name, "dist", "index.js");
const MEMORY = pkg("server-memory");
const EVERYTHING = pkg("server-everything");
const FILESYSTEM = pkg("server-filesystem");
const TOKEN = "iso-token-must-not-leak";
const SECRETS = { intruder: "intruder-secret-4711", beta: "beta-secret-0815" };

// The attack binary where servers may run it, and a setuid-root copy of it.
function attackBins(dir) {
	const bin = path.join(dir, "bin");
	fs.mkdirSync(bin, { mode: 0o755 });
	fs.copyFileSync(ATTACK, path.join(bin, "attack"));
	fs.chmodSync(path.join(bin, "attack"), 0o755);
	fs.copyFileSync(ATTACK, path.join(bin, "suid-attack"));
	fs.chownSync(path.join(bin, "suid-attack"), 0, 0);
	fs.chmodSync(path.join(bin, "suid-attack"), 0o4755);
	return bin;
}

// The uid /health reports for a server.
async function serverUid(port, name) {
	return JSON.parse((await health(port)).text).isolation.servers[name].uid;
}

// The server processes below serve, by a word of their command line.
function serverPid(servePid, word) {
	for (const p of descendants(servePid)) {
		try {
			const cmd = fs.readFileSync(`/proc/${p}/cmdline`, "utf8");
			if (cmd.includes(word) && !cmd.startsWith("/bin/sh"))
				return p;
		} catch {}
	}
	return null;
}

function status(pid) {
	const out = {};
	for (const l of fs.readFileSync(`/proc/${pid}/status`, "utf8").split("\n")) {
		const i = l.indexOf(":");
		if (i > 0)
			out[l.slice(0, i)] = l.slice(i + 1).trim();
	}
	return out;
}

// Runs the attack binary as another user outside the gateway: what the machine allows
// without the isolation (the control each negative check needs to mean something).
function asNobody(args) {
	try {
		return execFileSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups",
			ATTACK, ...args], { encoding: "utf8" }).trim();
	} catch (e) {
		return String(e.stdout || e.message).trim();
	}
}

describe("a hostile server among normal ones, each under its own user", () => {
	let dir, port, r, c, pids, iso, bin, outside;

	before(async () => {
		for (const f of [MEMORY, EVERYTHING, FILESYSTEM, ATTACK])
			if (!f || !fs.existsSync(f))
				throw new Error(`${f} is missing: npm ci --prefix tests/gateway, ` +
					"meson build");
		dir = tmpdir("gw-iso");
		port = await freePort();
		bin = attackBins(dir);
		// World-readable, but outside every server's view.
		fs.mkdirSync(path.join(dir, "outside"), { mode: 0o755 });
		outside = path.join(dir, "outside", "secret.txt");
		fs.writeFileSync(outside, "outside the view\n", { mode: 0o644 });
		const home = paths(dir).home;
		const node = shq(NODE);
		r = await launch({
			beta: { runCmd: fakeCmd("beta"), envs: { FAKE_SECRET: SECRETS.beta } },
			everything: { runCmd: `exec ${node} ${shq(EVERYTHING)}` },
			files: { runCmd: `exec ${node} ${shq(FILESYSTEM)} ` +
				shq(path.join(dir, "files")),
				paths: [path.join(dir, "files")] },
			intruder: { runCmd: `exec ${node} ${shq(INTRUDER)}`,
				envs: { ATTACK_BIN: path.join(bin, "attack"),
					INTRUDER_SECRET: SECRETS.intruder } },
			// Not "memory": that name is the catalog's, which would ignore runCmd.
			mem: { runCmd: `exec ${node} ${shq(MEMORY)}`,
				envs: { MEMORY_FILE_PATH: path.join(home, "mem", "graph.jsonl") } },
		}, { dir, port, token: TOKEN, extra: readPaths(bin) });
		assert.equal(r.code, 0, r.stderr);
		c = new RawClient(`http://127.0.0.1:${port}/mcp`, TOKEN);
		await c.initialize();
		iso = JSON.parse((await health(port)).text).isolation;
		pids = { gateway: r.pid };
		for (const [n, w] of [["beta", "fake-server"], ["everything", "server-everything"],
			["files", "server-filesystem"], ["intruder", "intruder-server"],
			["mem", "server-memory"]])
			pids[n] = serverPid(r.pid, w);
		for (const [n, p] of Object.entries(pids))
			assert.ok(p, `no pid for ${n}`);
	});

	after(async () => {
		await stop(r?.pid);
	});

	const attack = (op, arg) => c.callText("intruder_attack", { op, arg });

	test("each server has its own uid and gid, no groups, no capabilities, no_new_privs",
		async () => {
			const uids = new Set();
			for (const n of ["beta", "everything", "files", "intruder", "mem"]) {
				const s = status(pids[n]);
				const uid = Number(s.Uid.split(/\s+/)[0]);
				const all = new RegExp(`^${uid}\\s+${uid}\\s+${uid}\\s+${uid}$`);
				assert.equal(uid, iso.servers[n].uid, `${n}: /health has another`);
				assert.match(s.Uid, all);
				assert.match(s.Gid, all);
				assert.ok(uid >= 60100 && uid <= 61099, `${n}: uid ${uid}`);
				assert.equal(s.Groups, "", `${n}: supplementary groups`);
				for (const k of ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"])
					assert.equal(s[k], "0000000000000000", `${n}: ${k}`);
				assert.equal(s.NoNewPrivs, "1", `${n}: no_new_privs`);
				uids.add(uid);
			}
			assert.equal(uids.size, 5, "uids shared");
			const self = JSON.parse(await c.callText("intruder_self", {}));
			const home = path.join(paths(dir).home, "intruder");
			assert.equal(self.home, home);
			assert.equal(self.cwd, home);
			assert.deepEqual(self.groups, [self.gid]);
			const st = fs.statSync(home);
			assert.equal(st.uid, self.uid);
			assert.equal(st.mode & 0o777, 0o700);
			// A clean environment: the base, its own envs, nothing of the gateway's.
			const allowed = new Set(["ATTACK_BIN", "HOME", "INTRUDER_SECRET", "LANG",
				"LANGUAGE", "PATH", "PWD", "SHLVL", "TERM", "TMPDIR", "TZ", "_"]);
			for (const k of self.env)
				assert.ok(allowed.has(k) || k.startsWith("LC_"), `inherited ${k}`);
		});

	test("no server holds a descriptor of the gateway's but its own stdio pipes", async () => {
		const targets = (pid) => new Map(fs.readdirSync(`/proc/${pid}/fd`).map((fd) => {
			try {
				return [fd, fs.readlinkSync(`/proc/${pid}/fd/${fd}`)];
			} catch {
				return [fd, ""];
			}
		}));
		// Pipes, sockets and our files are unique by name; anon inodes and /dev are not.
		const gw = new Set([...targets(pids.gateway).values()].filter((t) =>
			/^(pipe|socket):/.test(t) || t.startsWith(dir)));
		for (const n of ["beta", "everything", "files", "intruder", "mem"]) {
			const fds = targets(pids[n]);
			const stdio = new Set([0, 1, 2].map((i) => fds.get(String(i))));
			for (const [fd, t] of fds)
				assert.ok(!gw.has(t) || stdio.has(t),
					`${n} holds fd ${fd} -> ${t} of the gateway's`);
			assert.ok(![...fds.values()].some((t) => t.endsWith("mcp-gateway.log")), n);
		}
	});

	test("the token file: EACCES", async () => {
		assert.equal(await attack("read", paths(dir).token), "EACCES");
		// The file is still root's and 0600.
		const st = fs.statSync(paths(dir).token);
		assert.equal(st.uid, 0);
		assert.equal(st.mode & 0o777, 0o600);
	});

	test("another server's and the gateway's environ and mem: EACCES", async () => {
		for (const who of ["beta", "mem", "gateway"]) {
			assert.equal(await attack("read", `/proc/${pids[who]}/environ`), "EACCES",
				who);
			assert.equal(await attack("read", `/proc/${pids[who]}/mem`), "EACCES", who);
		}
		// What it is after: beta's secret is there for root to read.
		assert.ok(fs.readFileSync(`/proc/${pids.beta}/environ`, "utf8")
			.includes(SECRETS.beta));
	});

	test("ptrace-attach and process_vm_readv of another server and the gateway: EPERM",
		async () => {
			for (const who of ["beta", "everything", "gateway"]) {
				assert.equal(await attack("ptrace", pids[who]), "EPERM", who);
				assert.equal(await attack("vmread", pids[who]), "EPERM", who);
			}
			// Root can, so the address read is a real one.
			assert.match(execFileSync(ATTACK, ["vmread", String(pids.beta)],
				{ encoding: "utf8" }), /^ok 4096 bytes/);
		});

	test("killing another server and the gateway: EPERM, both live on", async () => {
		for (const who of ["beta", "mem", "gateway"])
			assert.equal(await attack("kill", pids[who]), "EPERM", who);
		await sleep(100);
		for (const who of ["beta", "mem", "gateway"])
			assert.ok(alive(pids[who]), `${who} died`);
	});

	test("writing into another server's HOME: EACCES", async () => {
		const target = path.join(paths(dir).home, "beta", "planted");
		assert.equal(await attack("write", target), "EACCES");
		assert.ok(!fs.existsSync(target));
		// Its own HOME it may write.
		assert.equal(await attack("write", path.join(paths(dir).home, "intruder", "mine")),
			"ok written");
	});

	test("a setuid-root binary gives no root back", async () => {
		const suid = path.join(bin, "suid-attack");
		// The control: outside the gateway, for another user, the setuid bit works here.
		assert.match(execFileSync("setpriv", ["--reuid=65534", "--regid=65534",
			"--clear-groups", suid, "whoami"], { encoding: "utf8" }), /euid=0 /);
		const self = JSON.parse(await c.callText("intruder_self", {}));
		const mine = `uid=${self.uid} euid=${self.uid} setuid0=EPERM`;
		assert.equal(await c.callText("intruder_attack", { op: "whoami" }), mine);
		// The setuid-root copy, run by the server: no_new_privs keeps its euid.
		assert.equal(await c.callText("intruder_attack", { op: "whoami", via: suid }),
			mine);
	});

	test("a file outside its view: EACCES (Landlock)", async (t) => {
		if (!iso.landlock.inForce) {
			t.skip(`Landlock is not in force: ${iso.landlock.detail}`);
			return;
		}
		// The control: permissions alone would let another user read it.
		assert.match(asNobody(["read", outside]), /^ok /);
		assert.equal(await attack("read", outside), "EACCES");
		// Another server's declared path is outside its view too.
		fs.writeFileSync(path.join(dir, "files", "shared.txt"), "x", { mode: 0o644 });
		assert.equal(await attack("read", path.join(dir, "files", "shared.txt")), "EACCES");
	});

	test("an abstract unix socket outside its domain: EPERM (Landlock ABI 6)", async (t) => {
		const abi = Number((iso.landlock.detail.match(/ABI (\d+)/) || [])[1] || 0);
		if (abi < 6) {
			t.skip(`needs Landlock ABI 6 for scopes: ${iso.landlock.detail}`);
			return;
		}
		const name = `gw-iso-${process.pid}`;
		const srv = net.createServer((s) => s.end());
		await new Promise((res) => srv.listen({ path: `\0${name}` }, res));
		try {
			// The control: any other user outside the gateway may connect.
			assert.equal(asNobody(["unix", name]), "ok connected");
			assert.equal(await attack("unix", name), "EPERM");
		} finally {
			srv.close();
		}
	});

	test("the other servers kept serving through all of it", async () => {
		assert.equal(await c.callText("echo", { text: "still" }), "beta:still");
		assert.equal(await c.callText("beta_env", {}),
			`secret=${SECRETS.beta} token=false`);
		assert.equal(await c.callText("everything_echo", { message: "hi" }), "Echo: hi");
		for (const [who, w] of [["beta", "fake-server"],
			["everything", "server-everything"], ["files", "server-filesystem"],
			["mem", "server-memory"]])
			assert.equal(serverPid(r.pid, w), pids[who], `${who} was restarted`);
	});

	test("the log masks what a server prints of its own envs", async () => {
		assert.equal(await c.callText("intruder_leak", {}), "leaked");
		const log = fs.readFileSync(paths(dir).log, "utf8");
		for (let i = 0; i < 20 && !/my secret is/.test(
			fs.readFileSync(paths(dir).log, "utf8")); i++)
			await sleep(50);
		const now = fs.readFileSync(paths(dir).log, "utf8");
		assert.match(now, /\[intruder\] my secret is \*{8}\n/);
		assert.match(now, /\[intruder\] starting with secret \*{8}\n/);
		assert.ok(!now.includes(SECRETS.intruder), "secret in the log");
		assert.ok(!now.includes(TOKEN), "token in the log");
		assert.ok(log.length > 0);
	});

	test("the filesystem server writes its declared path as its own user", async () => {
		const f = path.join(dir, "files", "note.txt");
		const w = await c.call("write_file", { path: f, content: "from the server" });
		assert.ok(!w.error && !w.result.isError, JSON.stringify(w));
		assert.equal(fs.readFileSync(f, "utf8"), "from the server");
		assert.equal(fs.statSync(f).uid, iso.servers.files.uid);
		assert.equal(fs.statSync(path.join(dir, "files")).uid, iso.servers.files.uid);
	});

	test("the memory server keeps its file in its HOME across a restart", async () => {
		const created = await c.call("create_entities", { entities: [
			{ name: "isolation", entityType: "test", observations: ["kept"] }] });
		assert.ok(!created.error, JSON.stringify(created));
		const file = path.join(paths(dir).home, "mem", "graph.jsonl");
		assert.equal(fs.statSync(file).uid, iso.servers.mem.uid);
		process.kill(pids.mem, "SIGKILL");
		let graph = "";
		for (let i = 0; i < 50 && !graph.includes("kept"); i++) {
			await sleep(100);
			try {
				graph = await c.callText("read_graph", {});
			} catch {}
		}
		assert.match(graph, /kept/);
		const again = serverPid(r.pid, "server-memory");
		assert.ok(again && again !== pids.mem, "not restarted");
		assert.equal(Number(status(again).Uid.split(/\s+/)[0]), iso.servers.mem.uid,
			"the restarted server has the same uid");
	});
});

test("--landlock=false: the view is off, and what it kept out is readable again", async () => {
	const dir = tmpdir("gw-iso-noll");
	const port = await freePort();
	const bin = attackBins(dir);
	fs.mkdirSync(path.join(dir, "outside"), { mode: 0o755 });
	const outside = path.join(dir, "outside", "secret.txt");
	fs.writeFileSync(outside, "outside the view\n", { mode: 0o644 });
	const r = await launch({ intruder: { runCmd: `exec ${shq(NODE)} ${shq(INTRUDER)}`,
		envs: { ATTACK_BIN: path.join(bin, "attack") } } },
	{ dir, port, token: "noll", extra: ["--landlock=false", ...readPaths(bin)] });
	try {
		assert.equal(r.code, 0, r.stderr);
		const iso = JSON.parse((await health(port)).text).isolation;
		assert.deepEqual(iso.landlock, { detail: "off (--landlock=false)", inForce: false });
		const c = new RawClient(`http://127.0.0.1:${port}/mcp`, "noll");
		await c.initialize();
		assert.match(await c.callText("intruder_attack", { op: "read", arg: outside }),
			/^ok /);
		// The user is still its own: the token stays out of reach.
		assert.equal(await c.callText("intruder_attack", { op: "read", arg: paths(dir).token }),
			"EACCES");
	} finally {
		await stop(r.pid);
	}
});

// Root without CAP_SYS_PTRACE, on both sides, so that only dumpability tells them apart.
test("the gateway is not dumpable: its memory is out of reach where a twin's is not",
	async () => {
		const dir = tmpdir("gw-iso-dump");
		const port = await freePort();
		const noPtrace = ["setpriv", "--bounding-set=-sys_ptrace"];
		const r = await launch({}, { dir, port, token: "d", wrap: noPtrace });
		const twin = spawn(noPtrace[0], [...noPtrace.slice(1), "sleep", "20"],
			{ stdio: "ignore" });
		try {
			assert.equal(r.code, 0, r.stderr);
			await sleep(200);
			const peek = (pid) => {
				try {
					return execFileSync(noPtrace[0], [...noPtrace.slice(1), ATTACK,
						"vmread", String(pid)], { encoding: "utf8" }).trim();
				} catch (e) {
					return String(e.stdout).trim();
				}
			};
			assert.equal(peek(twin.pid), "ok 4096 bytes", "the control");
			assert.equal(peek(r.pid), "EPERM");
		} finally {
			twin.kill("SIGKILL");
			await stop(r.pid);
		}
	});

test("a server npx installs into its HOME runs as its user", async () => {
	const dir = tmpdir("gw-iso-npx");
	const port = await freePort();
	// A package without dependencies, so npx needs no registry: our fake server.
	const src = path.join(dir, "pkg", "src");
	fs.mkdirSync(src, { recursive: true, mode: 0o755 });
	fs.chmodSync(path.join(dir, "pkg"), 0o755);
	fs.copyFileSync(process.env.GW_FAKE, path.join(src, "server.mjs"));
	fs.writeFileSync(path.join(src, "package.json"), JSON.stringify({ name: "gw-npx-server",
		version: "1.0.0", type: "module", bin: { "gw-npx-server": "server.mjs" } }));
	execFileSync("npm", ["pack", "--silent", "--pack-destination", path.join(dir, "pkg")],
		{ cwd: src, stdio: ["ignore", "pipe", "pipe"] });
	const tgz = path.join(dir, "pkg", "gw-npx-server-1.0.0.tgz");
	fs.chmodSync(tgz, 0o644);
	const runCmd = `CUBE_MCP_FAKE_NAME=npxed exec npx -y --offline --package=${shq(tgz)} ` +
		"gw-npx-server";
	const r = await launch({ npxed: { runCmd } },
		{ dir, port, token: "npx", extra: readPaths(path.join(dir, "pkg")) });
	try {
		assert.equal(r.code, 0, r.stderr);
		const c = new RawClient(`http://127.0.0.1:${port}/mcp`, "npx");
		await c.initialize();
		assert.equal(await c.callText("echo", { text: "x" }), "npxed:x");
		const uid = await serverUid(port, "npxed");
		const npx = path.join(paths(dir).home, "npxed", ".npm", "_npx");
		assert.ok(fs.existsSync(npx), "npx did not install into the server's HOME");
		assert.equal(fs.statSync(npx).uid, uid);
	} finally {
		await stop(r.pid);
	}
});

test("pull fills the HOME a catalog server will have, and hands it to its user", async () => {
	const dir = tmpdir("gw-iso-pull");
	const port = await freePort();
	const p = paths(dir);
	const bin = attackBins(dir);
	fs.writeFileSync(p.catalog, JSON.stringify({ cached: { command: [[NODE, INTRUDER]],
		env: { ATTACK_BIN: path.join(bin, "attack"), INTRUDER_NAME: "cached" },
		install: [["sh", "-c", "mkdir -p $HOME/.cache && echo warm > $HOME/.cache/pkg"]],
	} }));
	const pulled = await run(["pull", "--catalog-file", p.catalog, "--servers-home", p.home,
		"cached"]);
	assert.equal(pulled.code, 0, pulled.stderr);
	const r = await launch({ cached: {} }, { dir, port, token: "pull", extra: readPaths(bin) });
	try {
		assert.equal(r.code, 0, r.stderr);
		const uid = await serverUid(port, "cached");
		const file = path.join(p.home, "cached", ".cache", "pkg");
		assert.equal(fs.statSync(file).uid, uid, "the pulled cache is not the server's");
		const c = new RawClient(`http://127.0.0.1:${port}/mcp`, "pull");
		await c.initialize();
		assert.equal(await c.callText("cached_attack", { op: "read", arg: file }),
			"ok 5 bytes");
	} finally {
		await stop(r.pid);
	}
});

test("a HOME taken over from another owner: no link leads the chown out of it", async () => {
	const dir = tmpdir("gw-iso-home");
	const port = await freePort();
	const victim = path.join(dir, "victim.txt");
	fs.writeFileSync(victim, "root's\n", { mode: 0o600 });
	const home = path.join(paths(dir).home, "alpha");
	fs.mkdirSync(home, { recursive: true });
	fs.writeFileSync(path.join(home, "own.txt"), "mine\n");
	fs.symlinkSync(victim, path.join(home, "soft"));
	fs.linkSync(victim, path.join(home, "hard"));
	const r = await launch({ alpha: { runCmd: fakeCmd("alpha") } }, { dir, port, token: "h" });
	try {
		assert.equal(r.code, 0, r.stderr);
		const uid = await serverUid(port, "alpha");
		assert.equal(fs.statSync(home).uid, uid);
		assert.equal(fs.statSync(path.join(home, "own.txt")).uid, uid);
		assert.equal(fs.lstatSync(path.join(home, "soft")).uid, uid, "the link itself");
		assert.equal(fs.statSync(victim).uid, 0, "the chown followed a link out of HOME");
	} finally {
		await stop(r.pid);
	}
});

// gateway/isolate/isolate.c's pick: FNV-1a of the name into the range, then the next free uid.
function fnvSlot(name, span) {
	let h = 2166136261;
	for (const b of Buffer.from(name))
		h = Math.imul(h ^ b, 16777619) >>> 0;
	return h % span;
}

test("uids are stable per name; when a new server takes one, files follow their server",
	async () => {
		const dir = tmpdir("gw-iso-uid");
		const port = await freePort();
		const data = path.join(dir, "bdata");
		const b = { runCmd: fakeCmd("b"), paths: [data] };
		let r = await launch({ b }, { dir, port, token: "u" });
		let before;
		try {
			assert.equal(r.code, 0, r.stderr);
			before = await serverUid(port, "b");
			assert.equal(fs.statSync(data).uid, before);
		} finally {
			await stop(r.pid);
		}
		// The same config again: the same uid.
		r = await launch({ b }, { dir, port, token: "u" });
		try {
			assert.equal(await serverUid(port, "b"), before);
		} finally {
			await stop(r.pid);
		}
		// A name that sorts first and hashes to b's slot takes b's uid; b moves on and takes
		// its HOME and declared path along.
		const slot = fnvSlot("b", 1000);
		let thief = null;
		for (let i = 0; thief === null && i < 100000; i++)
			if (fnvSlot(`a${i}`, 1000) === slot)
				thief = `a${i}`;
		assert.ok(thief, "no colliding name found");
		r = await launch({ [thief]: { runCmd: fakeCmd("t") }, b }, { dir, port, token: "u" });
		try {
			assert.equal(r.code, 0, r.stderr);
			const now = await serverUid(port, "b");
			assert.equal(await serverUid(port, thief), before);
			assert.notEqual(now, before);
			assert.equal(fs.statSync(data).uid, now, "the declared path stayed with the uid");
			assert.equal(fs.statSync(path.join(paths(dir).home, "b")).uid, now);
			assert.equal(fs.statSync(path.join(paths(dir).home, "b", ".tmp")).uid, now);
		} finally {
			await stop(r.pid);
		}
	});

test("envs leave the launcher's command line within 100 ms; the log masks them", async () => {
	const dir = tmpdir("gw-iso-cmd");
	const port = await freePort();
	const p = paths(dir);
	const secret = "cmdline-secret-value-31337";
	const cfg = { slow: { runCmd: `exec ${shq(NODE)} ${shq(INTRUDER)}`,
		envs: { INTRUDER_SECRET: secret, INTRUDER_SLOW_MS: "2500", INTRUDER_NAME: "slow" },
	} };
	const args = ["--config", JSON.stringify(cfg), "--port", String(port),
		"--token-file", p.token,
		"--pid-file", p.pid, "--log-file", p.log, "--catalog-file", p.catalog,
		"--servers-dir", p.servers, "--servers-home", p.home, "--audit-log", p.audit,
		...readPaths()];
	const t0 = Date.now();
	const child = spawn(process.env.GW_BIN, args, { stdio: "ignore",
		env: { ...process.env, GATEWAY_ACCESS_TOKEN: "cmd-token" } });
	const done = new Promise((res) => child.on("exit", (code) => res(code)));
	let exited = null, lastSeen = -1, checks = 0;
	done.then((code) => (exited = code));
	// Every process's command line, every 10 ms, until the launcher is done.
	while (exited === null) {
		const t = Date.now() - t0;
		for (const d of fs.readdirSync("/proc")) {
			if (!/^\d+$/.test(d))
				continue;
			let cmd = "";
			try {
				cmd = fs.readFileSync(`/proc/${d}/cmdline`, "latin1");
			} catch {}
			if (cmd.includes(secret))
				lastSeen = Math.max(lastSeen, t);
		}
		checks++;
		await sleep(10);
	}
	const took = Date.now() - t0;
	try {
		assert.equal(exited, 0);
		assert.ok(took > 2400, `the launch took only ${took} ms`);
		console.log(`# envs last seen in a cmdline at ${lastSeen} ms after the start ` +
			`(-1: never seen); launch took ${took} ms; ${checks} scans`);
		assert.ok(lastSeen < 100, `an env value was in a command line at ${lastSeen} ms`);
		// The server printed it at start; the log has it masked.
		const log = fs.readFileSync(p.log, "utf8");
		assert.match(log, /\[slow\] starting with secret \*{8}/);
		assert.ok(!log.includes(secret), "the env value is in the log");
	} finally {
		await stop(readPid(p.pid));
	}
});

test("runAs: root opts one server out, loudly; an unknown value is a start error", async () => {
	const dir = tmpdir("gw-iso-root");
	const port = await freePort();
	const bad = await launch({ a: { runCmd: fakeCmd("a"), runAs: "admin" } },
		{ dir, port, token: "r" });
	assert.equal(bad.code, 1);
	assert.match(bad.stderr,
		/mcp server "a": runAs must be "isolated" \(the default\) or "root"/);
	assert.ok(!fs.existsSync(paths(dir).token), "a token file was written");
	const r = await launch({ privileged: { runCmd: fakeCmd("privileged"), runAs: "root" },
		plain: { runCmd: fakeCmd("plain"), runAs: "isolated" } },
	{ dir, port, token: "r" });
	try {
		assert.equal(r.code, 0, r.stderr);
		const h = JSON.parse((await health(port)).text).isolation.servers;
		assert.deepEqual(h.privileged, { runAs: "root", uid: 0 });
		assert.equal(h.plain.runAs, "isolated");
		const pid = serverPid(r.pid, "fake-server");
		const uids = descendants(r.pid).filter((p) => {
			try {
				return fs.readFileSync(`/proc/${p}/cmdline`, "utf8")
					.includes("fake-server");
			} catch {
				return false;
			}
		}).map((p) => Number(status(p).Uid.split(/\s+/)[0])).sort((a, b) => a - b);
		assert.ok(pid);
		assert.deepEqual(uids, [0, h.plain.uid]);
		assert.match(fs.readFileSync(paths(dir).log, "utf8"),
			new RegExp("level=WARN msg=\"SERVER RUNS AS ROOT, NOT ISOLATED " +
				"\\(runAs: root\\).*server=privileged"));
	} finally {
		await stop(r.pid);
	}
});

test("cgroup v2 limits per server", async (t) => {
	const dir = tmpdir("gw-iso-cg");
	const port = await freePort();
	const r = await launch({ alpha: { runCmd: fakeCmd("alpha") } }, { dir, port, token: "cg",
		extra: ["--server-memory", "256M", "--server-cpus", "0.5", "--server-pids", "64"],
	});
	try {
		assert.equal(r.code, 0, r.stderr);
		const cg = JSON.parse((await health(port)).text).isolation.cgroup;
		assert.match(fs.readFileSync(paths(dir).log, "utf8"),
			/msg="server isolation".*cgroup="/);
		if (!cg.inForce) {
			assert.match(cg.detail, /^(unavailable|off)/);
			t.skip(`no writable cgroup v2 with memory, cpu and pids: ${cg.detail}`);
			return;
		}
		const pid = serverPid(r.pid, "fake-server");
		// The server sits in <cgroup2 root>/mcp-gateway/alpha, with the limits asked for.
		const rel = fs.readFileSync(`/proc/${pid}/cgroup`, "utf8").match(/^0::(.*)$/m)[1];
		assert.equal(rel, "/mcp-gateway/alpha");
		const root = cg.detail.replace(/^in force under /, "")
			.replace(/\/mcp-gateway$/, "");
		const d = path.join(root, rel);
		assert.equal(fs.readFileSync(path.join(d, "memory.max"), "utf8").trim(),
			String(256 << 20));
		assert.equal(fs.readFileSync(path.join(d, "cpu.max"), "utf8").trim(),
			"50000 100000");
		assert.equal(fs.readFileSync(path.join(d, "pids.max"), "utf8").trim(), "64");
	} finally {
		await stop(r.pid);
	}
});

test("a gateway that is not root refuses to run isolated servers, and says why", async () => {
	const dir = tmpdir("gw-iso-user");
	const port = await freePort();
	const r = await runProgram("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups",
		process.env.GW_BIN, "serve",
		"--config", JSON.stringify({ a: { runCmd: fakeCmd("a") } }),
		"--port", String(port), "--pid-file", "", "--servers-home", path.join(dir, "home"),
		"--catalog-file", path.join(dir, "none.json")],
	{ env: { PATH: process.env.PATH, GATEWAY_ACCESS_TOKEN: "u" }, timeout: 20000 });
	assert.equal(r.code, 1, r.stderr);
	assert.match(r.stderr, new RegExp("giving each MCP server a user of its own needs root; " +
		"run mcp-gateway as root, or give every server \"runAs\": \"root\""));
	assert.ok(!fs.existsSync(path.join(dir, "home")), "a HOME was made");
});

test("bad isolation flags fail before anything is written", async () => {
	const dir = tmpdir("gw-iso-flags");
	for (const [flag, val, msg] of [["--server-uid-range", "0-10", /--server-uid-range/],
		["--server-uid-range", "70000-80000", /within 1-65534/],
		["--server-memory", "lots", /--server-memory/],
		["--server-cpus", "-1", /--server-cpus/]]) {
		const r = await run(["--config", "{}", "--token-file", paths(dir).token,
			"--log-file", paths(dir).log, flag, val]);
		assert.equal(r.code, 1, `${flag} ${val}`);
		assert.match(r.stderr, msg);
		assert.ok(!fs.existsSync(paths(dir).token) && !fs.existsSync(paths(dir).log));
	}
});
