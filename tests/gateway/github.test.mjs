// Acceptance case 18 (and 16 for GitHub servers): github/<owner>/<repo> servers cloned from a
// local bare repository standing in for GitHub through --github-base-url. Needs git.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { before, test } from "node:test";

import { FAKE, RawClient, fakeCmd, freePort, health, launch, paths, readPaths, serve, stop, tmpdir }
	from "./lib.mjs";

let base, baseUrl;

function git(args, cwd) {
	const env = { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.invalid",
		GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.invalid",
		GIT_CONFIG_NOSYSTEM: "1", HOME: base };
	execFileSync("git", args, { cwd, stdio: ["ignore", "pipe", "pipe"], env });
}

before(() => {
	base = tmpdir("gw-gh");
	const work = path.join(base, "work");
	fs.mkdirSync(work);
	// The repository carries its own server; runCmd starts it by a path relative to the clone.
	fs.copyFileSync(FAKE, path.join(work, "server.mjs"));
	fs.writeFileSync(path.join(work, "README"), "test server\n");
	git(["init", "-q", "-b", "main"], work);
	git(["add", "."], work);
	git(["commit", "-q", "-m", "server"], work);
	fs.mkdirSync(path.join(base, "gh", "acme"), { recursive: true });
	git(["clone", "-q", "--bare", work, path.join(base, "gh", "acme", "tools.git")], base);
	baseUrl = `file://${path.join(base, "gh")}`;
});

const ghServer = {
	installCmd: "touch installed && pwd > where",
	runCmd: `CUBE_MCP_FAKE_NAME=gh exec ${process.execPath} server.mjs`,
	envs: { FAKE_SECRET: "gh-secret" },
};

// The clone runs as the server's user; the bare repository standing in for GitHub is root's,
// which git refuses as a local source unless the user's own config says it is safe. The HOME
// made here is root's; the gateway hands it to the server's user.
function ghHome(dir) {
	const home = path.join(paths(dir).home, "github_acme_tools");
	fs.mkdirSync(home, { recursive: true });
	fs.writeFileSync(path.join(home, ".gitconfig"), "[safe]\n\tdirectory = *\n");
	return home;
}

test("18a: clone, install in the clone, run from it; sanitised clash names", async () => {
	const dir = tmpdir();
	ghHome(dir);
	const port = await freePort();
	const cfg = { "github/acme/tools": ghServer, alpha: { runCmd: fakeCmd("alpha") } };
	const g = await serve(cfg, { dir, port,
		extra: ["--github-base-url", baseUrl, ...readPaths(base)] });
	try {
		const c = new RawClient(g.url, "tok");
		await c.initialize();
		const names = await c.listTools();
		assert.ok(names.includes("echo"), names);
		assert.ok(names.includes("github_acme_tools_echo"), names);
		assert.equal(await c.callText("github_acme_tools_echo", { text: "x" }), "gh:x");
		assert.equal(await c.callText("gh_env", {}), "secret=gh-secret token=false");
		const clone = path.join(paths(dir).servers, "github", "acme", "tools");
		assert.ok(fs.existsSync(path.join(clone, ".git")), "no .git");
		assert.ok(fs.existsSync(path.join(clone, "installed")), "install not run in clone");
		assert.equal(fs.readFileSync(path.join(clone, "where"), "utf8").trim(), clone);
		assert.ok(!fs.existsSync(`${clone}.partial`), ".partial left");
		assert.match(g.log(), /cloning repository/);
		// The clone and what its install made belong to the server's own user.
		const h = JSON.parse((await health(port)).text);
		const uid = h.isolation.servers["github/acme/tools"].uid;
		assert.ok(uid >= 60100, `uid ${uid}`);
		assert.equal(fs.statSync(clone).uid, uid, "clone not owned by the server's user");
		assert.equal(fs.statSync(path.join(clone, "installed")).uid, uid);
		assert.equal(fs.statSync(path.join(clone, ".git")).uid, uid);
		assert.match(g.log(), /^\[github\/acme\/tools\] /m, "clone output is prefixed");
	} finally {
		await g.stop();
	}
	// A second start reuses the clone (no new clone) but runs the install again.
	fs.rmSync(path.join(paths(dir).servers, "github", "acme", "tools", "installed"));
	const g2 = await serve({ "github/acme/tools": ghServer }, { dir, port,
		extra: ["--github-base-url", baseUrl, ...readPaths(base)] });
	try {
		assert.doesNotMatch(g2.log(), /cloning repository/);
		assert.ok(fs.existsSync(path.join(paths(dir).servers, "github", "acme", "tools",
			"installed")));
	} finally {
		await g2.stop();
	}
});

test("18b: a failed clone leaves neither the dir nor .partial", async () => {
	const dir = tmpdir();
	ghHome(dir);
	const port = await freePort();
	const g = await serve({ "github/acme/missing": ghServer }, { dir, port, wait: false,
		extra: ["--github-base-url", baseUrl, ...readPaths(base)] });
	assert.equal(await g.exited, 1);
	assert.match(g.log(), new RegExp(`mcp server "github/acme/missing": ` +
		`clone ${baseUrl}/acme/missing\\.git: exit status \\d+`));
	const target = path.join(paths(dir).servers, "github", "acme", "missing");
	assert.ok(!fs.existsSync(target), "dir exists");
	assert.ok(!fs.existsSync(`${target}.partial`), ".partial exists");
});

test("18c: stale dir and .partial do not block a later clone", async () => {
	const dir = tmpdir();
	ghHome(dir);
	const port = await freePort();
	const target = path.join(paths(dir).servers, "github", "acme", "tools");
	fs.mkdirSync(path.join(target, "junk"), { recursive: true });
	fs.writeFileSync(path.join(target, "junk", "f"), "x");
	fs.mkdirSync(`${target}.partial/deep/er`, { recursive: true });
	fs.writeFileSync(`${target}.partial/deep/er/f`, "x");
	const g = await serve({ "github/acme/tools": ghServer }, { dir, port,
		extra: ["--github-base-url", baseUrl, ...readPaths(base)] });
	try {
		assert.ok(fs.existsSync(path.join(target, ".git")));
		assert.ok(fs.existsSync(path.join(target, "server.mjs")));
		assert.ok(!fs.existsSync(path.join(target, "junk")), "stale content kept");
		assert.ok(!fs.existsSync(`${target}.partial`));
	} finally {
		await g.stop();
	}
});

test("18d: git missing from PATH", async () => {
	const dir = tmpdir();
	ghHome(dir);
	const port = await freePort();
	const empty = path.join(dir, "emptybin");
	fs.mkdirSync(empty);
	const g = await serve({ "github/acme/tools": ghServer }, { dir, port, wait: false,
		extra: ["--github-base-url", baseUrl, ...readPaths(base)], env: { PATH: empty } });
	assert.equal(await g.exited, 1);
	assert.match(g.log(),
		/git is required to clone GitHub MCP servers; install it in the template/);
});

test("18e: the launcher passes the base URL and servers dir to serve", async () => {
	const dir = tmpdir();
	ghHome(dir);
	const port = await freePort();
	const r = await launch({ "github/acme/tools": ghServer }, { dir, port, token: "gh",
		extra: ["--github-base-url", baseUrl, ...readPaths(base)] });
	try {
		assert.equal(r.code, 0, r.stderr);
		const c = new RawClient(`http://127.0.0.1:${port}/mcp`, "gh");
		await c.initialize();
		assert.equal(await c.callText("echo", { text: "l" }), "gh:l");
	} finally {
		await stop(r.pid);
	}
});
