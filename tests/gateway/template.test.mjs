// Templates as they are built (issue 37): a template installs its servers as root, the way its
// author does: a script with its node_modules in a directory under /root, a package installed
// with `npm install -g` into a prefix in root's home (its bin on PATH). /root is 0700, so a
// server under its own uid could not reach either. The gateway starts them under the default
// isolation with no flag about paths: each gets a view (a mount namespace) in which /root holds
// only what its command line names, read-only. Beside them the test checks what a server still
// cannot see, and that a file it may not read stops its start with a message naming it.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { FAKE, NODE, RawClient, freePort, serve, tmpdir } from "./lib.mjs";

const ROOT_HOME = "/root";
const tag = `.gwtpl-${process.pid}`;
const srvDir = path.join(ROOT_HOME, `${tag}-srv`);
const npmDir = path.join(ROOT_HOME, `${tag}-npm`);
const secret = path.join(ROOT_HOME, `${tag}-secret`);

// A package of the fake server: server.mjs imports it from node_modules beside it.
function layOut() {
	const mod = path.join(srvDir, "node_modules", "fake");
	fs.mkdirSync(mod, { recursive: true });
	fs.copyFileSync(FAKE, path.join(mod, "fake-server.mjs"));
	fs.writeFileSync(path.join(srvDir, "server.mjs"),
		'import "./node_modules/fake/fake-server.mjs";\n');
	// npm's own global install of a packed tarball, as a Dockerfile's RUN line does it.
	const pkg = tmpdir("gw-tplpkg");
	fs.writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: "gwtpl-fake",
		version: "1.0.0", bin: { "gwtpl-fake": "server.mjs" } }));
	fs.writeFileSync(path.join(pkg, "server.mjs"), `#!${NODE}\n` +
		fs.readFileSync(FAKE, "utf8").replace(/^#!.*\n/, ""));
	const tgz = execFileSync("npm", ["pack", "--silent", "--pack-destination", pkg],
		{ cwd: pkg, encoding: "utf8" }).trim().split("\n").pop();
	execFileSync("npm", ["install", "-g", "--offline", "--no-audit", "--no-fund",
		"--prefix", npmDir, path.join(pkg, tgz)], { stdio: "ignore" });
	fs.writeFileSync(secret, "root only\n", { mode: 0o600 });
}

function cleanUp() {
	for (const d of [srvDir, npmDir, secret])
		fs.rmSync(d, { recursive: true, force: true });
}

const fakeEnv = (name) => `CUBE_MCP_FAKE_SERVER=1 CUBE_MCP_FAKE_NAME=${name}`;

describe("a template's servers under /root start with only --config", () => {
	let g, c;

	before(async () => {
		assert.equal(fs.statSync(ROOT_HOME).mode & 0o077, 0, "/root is closed (0700) here");
		layOut();
		const port = await freePort(), dir = tmpdir("gw-tpl");
		g = await serve({
			script: { runCmd: `${fakeEnv("script")} exec node ${srvDir}/server.mjs` },
			global: { runCmd: `${fakeEnv("global")} exec gwtpl-fake` },
		}, { dir, port, testReads: false,
			env: { PATH: `${npmDir}/bin:${process.env.PATH}` } });
		c = new RawClient(g.url, "tok");
		await c.initialize();
	});
	after(async () => {
		await g?.stop();
		cleanUp();
	});

	test("both serve their tools", async () => {
		const names = await c.listTools();
		assert.ok(names.includes("script_env") && names.includes("global_env"),
			names.join(","));
		assert.match(await c.callText("script_env", {}), /token=false/);
		assert.match(await c.callText("global_env", {}), /token=false/);
	});

	test("each runs under its own uid, not root", async () => {
		const h = await (await fetch(`http://127.0.0.1:${g.port}/health`)).json();
		const users = Object.values(h.isolation.servers);
		assert.ok(users.length === 2 && users.every((u) => u.runAs === "isolated" && u.uid > 0),
			JSON.stringify(h.isolation.servers));
	});
});

describe("what the view does not give", () => {
	let g, c;
	const other = path.join(ROOT_HOME, `${tag}-other`);

	before(async () => {
		layOut();
		// Readable by anyone but for /root: outside the view it is not there at all.
		fs.mkdirSync(other, { mode: 0o755 });
		fs.writeFileSync(path.join(other, "f"), "x\n", { mode: 0o644 });
		fs.writeFileSync(path.join(srvDir, "mine"), "root only\n", { mode: 0o600 });
		const port = await freePort();
		g = await serve({
			probe: { runCmd: `${fakeEnv("probe")} FAKE_READ=1 exec node ${srvDir}/server.mjs` },
		}, { dir: tmpdir("gw-tpl2"), port, testReads: false });
		c = new RawClient(g.url, "tok");
		await c.initialize();
	});
	after(async () => {
		await g?.stop();
		cleanUp();
		fs.rmSync(other, { recursive: true, force: true });
	});

	test("its own package reads; root's other entries are not there", async () => {
		assert.match(await c.callText("read", { path: `${srvDir}/server.mjs` }), /^ok:/);
		assert.equal(await c.callText("read", { path: `${other}/f` }), "err:ENOENT");
		assert.equal(await c.callText("read", { path: "/root/.bashrc" }), "err:ENOENT");
	});

	test("a file only root may read stays unreadable in the view", async () => {
		assert.equal(await c.callText("read", { path: `${srvDir}/mine` }), "err:EACCES");
	});

	test("a script root alone may read stops the start with the path and the way out",
		async () => {
			fs.copyFileSync(FAKE, path.join(srvDir, "private.mjs"));
			fs.chmodSync(path.join(srvDir, "private.mjs"), 0o600);
			const port = await freePort();
			await assert.rejects(serve({
				locked: { runCmd: `${fakeEnv("locked")} exec node ${srvDir}/private.mjs` },
			}, { dir: tmpdir("gw-tpl3"), port, testReads: false }), (e) => {
				assert.match(e.message, new RegExp(`could not read ${srvDir}/private\\.mjs`));
				assert.match(e.message, /its mode 0600 lets only its owner/);
				return true;
			});
		});
});
