// Per-server tool rules and the audit log (issue 37): "toolRules": {"allow": [...], "deny": [...]} in a server's
// config decides which of its tools clients see in tools/list and may call; a denied call is
// an MCP error that names the rule. A server that lists new tools later (list_changed) does
// not get around an allow list, and a rule of the wrong shape stops the start with a reason.

import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, describe, test } from "node:test";

import { RawClient, fakeCmd, freePort, paths, serve, sleep, tmpdir } from "./lib.mjs";

describe("toolRules", () => {
	let g, c;

	before(async () => {
		const port = await freePort(), dir = tmpdir("gw-rules");
		// beta also lists gen1 and grow (FAKE_GEN_FILE); grow adds a tool and says so.
		g = await serve({
			alpha: { runCmd: fakeCmd("alpha"), toolRules: { deny: ["sleep", "big"] } },
			beta: { runCmd: fakeCmd("beta", { FAKE_GEN_FILE: "gen" }),
				toolRules: { allow: ["beta_env", "grow", "beta_crash"],
					deny: ["beta_crash"] } },
		}, { dir, port });
		c = new RawClient(g.url, "tok");
		await c.initialize();
	});
	after(async () => {
		await g?.stop();
	});

	test("tools/list shows only what the rules let through", async () => {
		const names = await c.listTools();
		assert.ok(names.includes("echo") && names.includes("alpha_env"), names.join(","));
		assert.ok(!names.includes("sleep") && !names.includes("big"), "alpha's denied tools");
		const beta = names.filter((n) => n.startsWith("beta") || n === "grow" || n === "gen1");
		assert.deepEqual(beta.sort(), ["beta_env", "grow"], "beta: its allow list less deny");
		assert.ok(names.includes("steps"), "alpha's other tools stay");
	});

	test("a denied call is an MCP error that names the rule", async () => {
		const r = await c.call("sleep", { ms: 1 });
		assert.equal(r.error?.code, -32602, JSON.stringify(r));
		assert.match(r.error.message, /sleep is not allowed by the toolRules of server alpha/);
		const s = await c.call("beta_crash", {});
		assert.match(s.error?.message ?? "", /beta_crash is not allowed by the toolRules of server beta/,
			JSON.stringify(s));
		assert.ok((await c.call("gen1", {})).error, "gen1: outside beta's allow list");
		assert.equal(await c.callText("beta_env", {}), "secret= token=false");
	});

	test("tools a server lists later stay outside its allow list", async () => {
		assert.equal(await c.callText("grow", {}), "grown");
		await sleep(500);
		const names = await c.listTools();
		assert.ok(!names.some((n) => n.startsWith("grown")), names.join(","));
		const r = await c.call("grown11", {});
		assert.ok(r.error, JSON.stringify(r));
	});

	test("a rule of the wrong shape stops the start and says why", async () => {
		for (const [rules, why] of [
			[{ allow: "echo" }, /toolRules\.allow must be an array of tool names/],
			[{ deny: [1] }, /toolRules\.deny must be an array of tool names/],
			[{ only: ["echo"] }, /toolRules has "only"/],
			[["echo"], /toolRules must be an object/],
		]) {
			const b = await serve({ alpha: { runCmd: fakeCmd("alpha"), toolRules: rules } },
				{ dir: tmpdir("gw-rules-bad"), port: await freePort(), wait: false });
			const code = await Promise.race([b.exited, sleep(10000).then(() => "hung")]);
			await b.stop();
			assert.notEqual(code, 0, `${JSON.stringify(rules)}: exit ${code}`);
			assert.notEqual(code, "hung", JSON.stringify(rules));
			assert.match(b.log(), why);
		}
	});
});

// The audit log: one JSON line per tools/call, the arguments' names and size but never their
// values, the outcome and the duration; a denied call too; rotated by size, keeping --audit-keep.
describe("audit log", () => {
	let g, c, p;

	before(async () => {
		const port = await freePort(), dir = tmpdir("gw-audit");
		p = paths(dir);
		g = await serve({
			alpha: { runCmd: fakeCmd("alpha"), toolRules: { deny: ["big"] } },
		}, { dir, port, extra: ["--audit-max-bytes", "4000", "--audit-keep", "2"] });
		c = new RawClient(g.url, "tok");
		await c.initialize();
	});
	after(async () => {
		await g?.stop();
	});

	const lines = (f) => fs.existsSync(f) ? fs.readFileSync(f, "utf8").trim().split("\n")
		.filter(Boolean).map((l) => JSON.parse(l)) : [];

	test("a line per call: server, tool, the arguments' shape, status, duration", async () => {
		assert.equal(await c.callText("echo", { text: "top-secret-value-4711" }),
			"alpha:top-secret-value-4711");
		await c.call("big", { n: 10 });
		const l = lines(p.audit);
		assert.equal(l.length, 2, JSON.stringify(l));
		assert.equal(l[0].server, "alpha");
		assert.equal(l[0].tool, "echo");
		assert.deepEqual(l[0].args.keys, ["text"]);
		assert.equal(l[0].args.bytes, JSON.stringify({ text: "top-secret-value-4711" }).length);
		assert.equal(l[0].status, "ok");
		assert.ok(l[0].ms >= 0 && /^\d{4}-\d\d-\d\dT/.test(l[0].time), JSON.stringify(l[0]));
		assert.equal(l[1].tool, "big");
		assert.equal(l[1].status, "denied");
		assert.ok(!fs.readFileSync(p.audit, "utf8").includes("top-secret"), "no values");
	});

	test("rotated by size, two old files kept", async () => {
		for (let i = 0; i < 60; i++)
			await c.callText("echo", { text: `n${i}` });
		const rotated = [1, 2, 3].map((k) => fs.existsSync(`${p.audit}.${k}`));
		assert.deepEqual(rotated, [true, true, false]);
		assert.ok(fs.statSync(p.audit).size < 4000 + 300);
		const all = [...lines(`${p.audit}.2`), ...lines(`${p.audit}.1`), ...lines(p.audit)];
		assert.ok(all.every((l) => l.server === "alpha"), "every line whole");
		assert.equal(all[all.length - 1].args.bytes, JSON.stringify({ text: "n59" }).length);
		assert.equal(fs.statSync(p.audit).mode & 0o777, 0o600);
	});
});
