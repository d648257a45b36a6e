// Answers relayed as text (issue 37): a server's answer in the simple shape goes to the client
// as the server wrote it, under the client's id; whatever else a server writes goes through
// jansson as before, so what the client gets is what it always got. The server here
// (shapes-server.mjs) writes whatever lines the test asks for, as a hostile one would.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { NODE, RawClient, freePort, paths, serve, shq, tmpdir } from "./lib.mjs";

const SHAPES = path.join(path.dirname(new URL(import.meta.url).pathname), "shapes-server.mjs");

// The answer's JSON text: the body of a JSON answer, the last data line of an SSE one.
function answerText(r) {
	if ((r.headers.get("content-type") || "").startsWith("application/json"))
		return r.text;
	const data = r.text.split("\n").filter((l) => l.startsWith("data: "));
	return data.length ? data[data.length - 1].slice(6) : null;
}

const ok = (text) => `{"content":[{"type":"text","text":${JSON.stringify(text)}}]}`;

describe("answers relayed as text", () => {
	let g, c, p;

	before(async () => {
		const port = await freePort(), dir = tmpdir("gw-answer");
		p = paths(dir);
		g = await serve({ shapes: { runCmd: `exec ${shq(NODE)} ${shq(SHAPES)}` } },
			{ dir, port });
		c = new RawClient(g.url, "tok");
		await c.initialize();
	});
	after(async () => {
		await g?.stop();
	});

	// One tools/call of "raw" with client id 'id'; the server writes 'lines'.
	async function raw(id, lines, json = false) {
		const r = await c.post({ jsonrpc: "2.0", id, method: "tools/call",
			params: { name: "raw", arguments: { lines } } },
			json ? { Accept: "application/json" } : {});
		assert.equal(r.status, 200, r.text);
		return r;
	}

	test("the simple shape goes out byte for byte, under the client's id", async () => {
		const result = "{\"content\":[{\"type\":\"text\",\"text\":\"a\\\"},\\\"id\\\":9,\\\"x\\\":" +
			"\\\"\u00e9\u20ac\u{1f600}\\n\\t\\\\\"}],\"isError\":false,\"n\":[1,-2,0,true,null,{},[]]}";
		for (const id of [41, "s-\"x\"\\", 0]) {
			for (const json of [false, true]) {
				const r = await raw(id, [`{"result":${result},"jsonrpc":"2.0","id":@ID@}`],
					json);
				const want = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`;
				assert.equal(answerText(r), want, `id ${JSON.stringify(id)} json ${json}`);
				if (json)
					assert.equal(r.text, want);
			}
		}
	});

	test("other spellings come out as jansson writes them", async () => {
		const cases = [
			// A second id, and the first one wrong: jansson keeps one.
			[`{"jsonrpc":"2.0","id":424242,"result":${ok("twice")},"id":@ID@}`,
				(id) => `{"jsonrpc":"2.0","id":${id},"result":${ok("twice")}}`],
			// A key spelt with an escape is the same key to jansson.
			[`{"jsonrpc":"2.0","i\\u0064":@ID@,"result":${ok("esc")}}`,
				(id) => `{"jsonrpc":"2.0","id":${id},"result":${ok("esc")}}`],
			// Whitespace and CR: gone, so nothing can split an SSE event.
			[`{ "jsonrpc" : "2.0" ,\r"id":@ID@ , "result":${ok("ws")} }\r`,
				(id) => `{"jsonrpc":"2.0","id":${id},"result":${ok("ws")}}`],
			// Escapes and reals: jansson's spelling.
			[`{"jsonrpc":"2.0","id":@ID@,"result":{"t":"\\u0041\\u00e9\\/","n":1e2}}`,
				(id) => `{"jsonrpc":"2.0","id":${id},"result":{"t":"A\u00e9/","n":100.0}}`],
		];
		let id = 100;
		for (const [line, want] of cases) {
			const r = await raw(++id, [line]);
			assert.equal(answerText(r), want(id), line);
		}
		// A duplicate key in the result: the client gets one, whichever jansson kept.
		const r = await raw(++id, [`{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":` +
			`"text","text":"shown","text":"hidden"}]}}`]);
		const t = answerText(r);
		assert.equal(t.split("\"text\":\"").length - 1, 1, t);
		assert.ok(!r.text.includes("\r"), "no CR in the stream");
	});

	test("lines that are no answer are not taken for one", async () => {
		const fake = (n) => ok(`fake${n}`);
		const r = await raw(7, [
			`{"jsonrpc":"2.0","id":@ID@,"method":"sampling/createMessage","params":{},` +
				`"result":${fake(1)}}`,
			`{"jsonrpc":"2.0","id":99999999999999999999,"result":${fake(2)}}`,
			`{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"@FF@"}]}}`,
			`{"jsonrpc":"2.0","id":"@ID@","result":${fake(4)}}`,
			`[{"jsonrpc":"2.0","id":@ID@,"result":${fake(5)}}]`,
			`{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"\\u0000"}]}}`,
			`{"jsonrpc":"2.0","id":@ID@,"result":${fake(7)}`,
			`{"jsonrpc":"2.0","id":@ID@,"result":${ok("real")}}`,
		]);
		assert.equal(answerText(r), `{"jsonrpc":"2.0","id":7,"result":${ok("real")}}`, r.text);
		// The session goes on: the next call gets its own answer.
		assert.equal(await c.callText("echo", { text: "after" }), "shapes:after");
	});

	test("the audit log reads isError as jansson does", async () => {
		const results = [
			"{\"isError\":true,\"content\":[]}",
			"{\"isError\":\"true\",\"content\":[]}",
			"{\"a\":{\"isError\":true},\"content\":[]}",
			"{\"isError\":true,\"isError\":false}",
			"{\"isError\":false,\"isError\":true}",
			"{\"is\\u0045rror\":true}",
			"[{\"isError\":true}]",
		];
		const before = fs.existsSync(p.audit) ? fs.readFileSync(p.audit, "utf8")
			.trim().split("\n").length : 0;
		const seen = [];
		let id = 200;
		for (const res of results) {
			const r = await raw(++id, [`{"jsonrpc":"2.0","id":@ID@,"result":${res}}`]);
			const got = JSON.parse(answerText(r)).result;
			seen.push(got?.isError === true ? "tool_error" : "ok");
		}
		const lines = fs.readFileSync(p.audit, "utf8").trim().split("\n").slice(before)
			.map((l) => JSON.parse(l));
		assert.deepEqual(lines.map((l) => l.status), seen);
		assert.deepEqual(seen, ["tool_error", "ok", "ok", seen[3], seen[4], "tool_error", "ok"]);
		assert.ok(lines.every((l) => l.server === "shapes" && l.tool === "raw"));
	});
});
