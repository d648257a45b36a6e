// Per-server tool rules (issue 37): "toolRules": {"allow": [...], "deny": [...]} in a server's
// config decides which of its tools clients see in tools/list and may call; a denied call is
// an MCP error that names the rule. A server that lists new tools later (list_changed) does
// not get around an allow list, and a rule of the wrong shape stops the start with a reason.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { RawClient, fakeCmd, freePort, serve, sleep, tmpdir } from "./lib.mjs";

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
