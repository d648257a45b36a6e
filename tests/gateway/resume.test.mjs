// Resumable POST streams through mcp-gateway: event ids and the priming event, a client that
// drops its POST stream mid tool call and reads on with GET and Last-Event-ID (by hand, and
// the SDK client through a proxy that cuts the stream), and a dropped stream nobody resumes
// being cancelled at the server once --resume-window has passed; and 2026-07-28 stateless
// requests, which have no session to resume on, cancelled at the server when dropped.

import assert from "node:assert/strict";
import http from "node:http";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { fakeCmd, freePort, NODE, RawClient, serve, shq, sleep, tmpdir } from "./lib.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const HOSTILE = path.join(HERE, "hostile-server.mjs");
const TOKEN = "resume-token";

// SSE events of a response as they come: [{id, data, retry}], until want(events) is true.
async function readEvents(res, want, events = [], ms = 10000) {
	const reader = res.body.getReader();
	const dec = new TextDecoder();
	let buf = "";
	const timer = setTimeout(() => reader.cancel(), ms);
	try {
		while (!want(events)) {
			const { value, done } = await reader.read();
			if (done)
				break;
			buf += dec.decode(value, { stream: true });
			let cut;
			while ((cut = buf.indexOf("\n\n")) >= 0) {
				const ev = {};
				for (const line of buf.slice(0, cut).split("\n")) {
					const m = line.match(/^(\w+): ?(.*)$/);
					if (m)
						ev[m[1]] = m[2];
				}
				buf = buf.slice(cut + 2);
				events.push(ev);
			}
		}
	} finally {
		clearTimeout(timer);
		reader.cancel().catch(() => {});
	}
	return events;
}

const message = (ev) => (ev.data ? JSON.parse(ev.data) : null);
const progressOf = (evs) => evs.map(message).filter((m) => m?.method ===
	"notifications/progress").map((m) => m.params.progress);
const answered = (id) => (evs) => evs.some((e) => message(e)?.id === id);

describe("resumable POST streams", () => {
	let g, url;

	before(async () => {
		const dir = tmpdir("gw-resume");
		g = await serve({
			fk: { runCmd: fakeCmd("fk") },
			hostile: { runCmd: `HOSTILE_TOKEN_FILE=/nonexistent exec ${shq(NODE)} ` +
				shq(HOSTILE) },
		}, { dir, port: await freePort(), token: TOKEN, extra: ["--resume-window", "2s"] });
		url = g.url;
	});

	after(async () => {
		await g?.stop();
	});

	async function startSteps(rc, id, n, ms) {
		const ac = new AbortController();
		const res = await fetch(url, { method: "POST", headers: rc.headers(),
			signal: ac.signal, body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call",
				params: { name: "steps", arguments: { n, ms },
					_meta: { progressToken: `t${id}` } } }) });
		assert.equal(res.status, 200);
		assert.match(res.headers.get("content-type"), /^text\/event-stream/);
		return { res, ac };
	}

	// A 2025-11-25 session whose steps call is dropped once `progress` events came.
	async function dropped(id, n, ms, progress) {
		const rc = new RawClient(url, TOKEN);
		await rc.initialize("2025-11-25");
		const { res, ac } = await startSteps(rc, id, n, ms);
		const first = await readEvents(res, (evs) => progressOf(evs).length >= progress);
		ac.abort();
		return { rc, first };
	}

	function resume(rc, last) {
		return fetch(url, { headers: rc.headers({ Accept: "text/event-stream",
			"Last-Event-ID": last }) });
	}

	test("priming event first, then every event has an id of its stream", async () => {
		const rc = new RawClient(url, TOKEN);
		await rc.initialize("2025-11-25");
		const { res } = await startSteps(rc, 1, 2, 10);
		const evs = await readEvents(res, answered(1));
		assert.equal(evs[0].data, "", "the priming event has empty data");
		assert.match(evs[0].retry, /^\d+$/);
		const [stream] = evs[0].id.split("-");
		assert.deepEqual(evs.map((e) => e.id), [0, 1, 2, 3].map((k) => `${stream}-${k}`));
		assert.deepEqual(progressOf(evs), [1, 2]);
		// An older session gets the ids but no priming event.
		const old = new RawClient(url, TOKEN);
		await old.initialize("2025-06-18");
		const o = await readEvents((await startSteps(old, 1, 1, 10)).res, answered(1));
		assert.ok(o.every((e) => e.data && /^\d+-[1-9]\d*$/.test(e.id)), JSON.stringify(o));
	});

	test("a dropped POST stream goes on after GET with Last-Event-ID", async () => {
		const { rc, first } = await dropped(2, 6, 150, 2);
		assert.deepEqual(progressOf(first), [1, 2]);
		const last = first[first.length - 1].id;
		const again = await resume(rc, last);
		assert.equal(again.status, 200);
		const rest = await readEvents(again, answered(2));
		assert.deepEqual(progressOf(rest), [3, 4, 5, 6], "no event lost, none twice");
		const answer = rest.map(message).find((m) => m?.id === 2);
		assert.equal(answer.result.content[0].text, "fk:steps:6");
		const [stream, seq] = last.split("-");
		assert.equal(rest[0].id, `${stream}-${Number(seq) + 1}`);
	});

	test("an answer that came while nobody read is replayed from an earlier id", async () => {
		const { rc, first } = await dropped(3, 3, 100, 1);
		await sleep(600);
		const again = await resume(rc, first[0].id);
		const rest = await readEvents(again, answered(3));
		assert.deepEqual(progressOf(rest), [1, 2, 3]);
		// Its end handed out, the stream is gone; a made-up id names no stream either.
		assert.equal((await resume(rc, first[0].id)).status, 400);
		assert.equal((await resume(rc, "999-1")).status, 400);
	});

	test("a dropped stream nobody resumes is cancelled at the server after the window",
		async () => {
			const rc = new RawClient(url, TOKEN);
			await rc.initialize("2025-11-25");
			const drop = new AbortController();
			const res = await fetch(url, { method: "POST", headers: rc.headers(),
				signal: drop.signal, body: JSON.stringify({ jsonrpc: "2.0", id: "drop",
					method: "tools/call", params: { name: "silent", arguments: {} } }) });
			await readEvents(res, (evs) => evs.length >= 1);
			drop.abort();
			const cancelled = async () => JSON.parse(await rc.callText("cancelled", {}));
			await sleep(1000);
			assert.deepEqual(await cancelled(), [], "not cancelled inside the window");
			let ids = [];
			for (let i = 0; i < 40 && ids.length === 0; i++) {
				await sleep(100);
				ids = await cancelled();
			}
			assert.equal(ids.length, 1, "cancelled once the window passed");
			assert.equal(typeof ids[0], "number", "with the server's own id");
		});

	// 2026-07-28: closing the response stream is the cancellation (no notice is sent).
	describe("2026-07-28 stateless requests: a closed stream cancels", () => {
		const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": {},
			"io.modelcontextprotocol/clientInfo": { name: "gw-resume", version: "0" } };
		let rc;

		before(async () => {
			rc = new RawClient(url, TOKEN);
			await rc.initialize("2025-11-25");
		});

		// The server's cancelled ids, once there are more than `had`. Looked for during
		// half the resume window only: at once, not as a session's unresumed stream.
		async function cancelledAfter(had) {
			let ids = [];
			for (let i = 0; i < 10 && ids.length <= had; i++) {
				await sleep(100);
				ids = JSON.parse(await rc.callText("cancelled", {}));
			}
			return ids;
		}

		for (const accept of ["application/json, text/event-stream", "application/json"]) {
			test(`dropped at once, the server gets its id (Accept: ${accept})`, async () => {
				const had = JSON.parse(await rc.callText("cancelled", {})).length;
				const ac = new AbortController();
				const pending = fetch(url, { method: "POST", signal: ac.signal, headers: {
					Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json",
					Accept: accept, "MCP-Protocol-Version": "2026-07-28",
					"Mcp-Method": "tools/call", "Mcp-Name": "silent" },
				body: JSON.stringify({ jsonrpc: "2.0", id: "s1", method: "tools/call",
					params: { name: "silent", arguments: {}, _meta: meta } }) })
					.catch(() => null);
				await sleep(300);
				ac.abort();
				await pending;
				const ids = await cancelledAfter(had);
				assert.equal(ids.length, had + 1, `cancelled ${JSON.stringify(ids)}`);
				assert.equal(typeof ids[had], "number", "the server's own id, not \"s1\"");
			});
		}

		test("the SDK v2 client at 2026-07-28 aborts a call: the server cancels", async () => {
			const v2 = await import("@modelcontextprotocol/client");
			const had = JSON.parse(await rc.callText("cancelled", {})).length;
			const transport = new v2.StreamableHTTPClientTransport(new URL(url),
				{ requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } });
			const client = new v2.Client({ name: "gw-resume-v2", version: "0" },
				{ versionNegotiation: { mode: { pin: "2026-07-28" } } });
			await client.connect(transport);
			assert.equal(transport.protocolVersion, "2026-07-28");
			const ac = new AbortController();
			const call = client.callTool({ name: "silent", arguments: {} },
				{ signal: ac.signal });
			await sleep(300);
			ac.abort("test cancels");
			await assert.rejects(call);
			const ids = await cancelledAfter(had);
			assert.equal(ids.length, had + 1, `cancelled ${JSON.stringify(ids)}`);
			await client.close();
		});
	});

	test("the SDK client resumes a stream a proxy cut mid call", async () => {
		const sdk = {
			...(await import("@modelcontextprotocol/sdk/client/index.js")),
			...(await import("@modelcontextprotocol/sdk/client/streamableHttp.js")),
		};
		const { port } = new URL(url);
		let cut = 0, resumedWith = null;
		// Passes everything through, but ends the first tools/call stream after 2 progress.
		const proxy = http.createServer((req, res) => {
			const chunks = [];
			req.on("data", (d) => chunks.push(d));
			req.on("end", () => {
				const body = Buffer.concat(chunks);
				if (req.headers["last-event-id"])
					resumedWith = req.headers["last-event-id"];
				const up = http.request({ host: "127.0.0.1", port, method: req.method,
					path: req.url, headers: req.headers }, (ur) => {
					res.writeHead(ur.statusCode, ur.headers);
					const cutting = cut === 0 && /"tools\/call"/.test(body);
					let seen = 0;
					ur.on("data", (d) => {
						res.write(d);
						seen += (String(d).match(/notifications\/progress/g) || []).length;
						if (cutting && seen >= 2) {
							cut++;
							ur.destroy();
							res.destroy();
						}
					});
					ur.on("end", () => res.end());
				});
				up.on("error", () => res.destroy());
				up.end(body);
			});
		});
		await new Promise((r) => proxy.listen(0, "127.0.0.1", r));
		try {
			const transport = new sdk.StreamableHTTPClientTransport(
				new URL(`http://127.0.0.1:${proxy.address().port}/mcp`),
				{ requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
					reconnectionOptions: { initialReconnectionDelay: 100,
						maxReconnectionDelay: 500, reconnectionDelayGrowFactor: 1.5,
						maxRetries: 5 } });
			const client = new sdk.Client({ name: "gw-resume", version: "0" });
			await client.connect(transport);
			const seen = [];
			const r = await client.callTool({ name: "steps", arguments: { n: 5, ms: 150 } },
				undefined, { onprogress: (p) => seen.push(p.progress), timeout: 15000 });
			assert.equal(cut, 1, "the proxy cut the stream");
			assert.match(resumedWith ?? "", /^\d+-\d+$/, "resumed with a POST stream's id");
			assert.equal(r.content[0].text, "fk:steps:5");
			assert.deepEqual(seen, [1, 2, 3, 4, 5]);
			await client.close();
		} finally {
			proxy.close();
		}
	});
});
