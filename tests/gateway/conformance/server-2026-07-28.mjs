#!/usr/bin/env node
// A stdio MCP server with what the 2026-07-28 scenarios of the conformance suite (0.2.0 line)
// ask of a server under test, beyond what server.mjs has: tools that answer with
// input_required results (multi round trip, SEP-2322), the tasks extension (SEP-2663), a
// tool with x-mcp-header parameters (SEP-2243), the stateless diagnostics (a tool that
// needs sampling, one that logs, ones that change the tool and prompt lists). Written for
// these tests.
//
// It uses the SDK's stdio transport for framing but dispatches itself: the SDK v1 Server
// strips what it does not know from params (inputResponses, requestState), adds content: []
// to every tools/call result and refuses a legacy `task` param, all of which these scenarios
// must see pass through the gateway as the server meant them.

import { createHmac, randomBytes } from "node:crypto";

import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const TASKS = "io.modelcontextprotocol/tasks";
const CAPS = "io.modelcontextprotocol/clientCapabilities";
const KEY = randomBytes(32);

class RpcError extends Error {
	constructor(code, message, data) {
		super(message);
		this.code = code;
		this.data = data;
	}
}

const text = (t) => ({ type: "text", text: t });
const done = (t, extra = {}) => ({ content: [text(t)], ...extra });
const stringArgs = (names) => ({ type: "object", required: names,
	properties: Object.fromEntries(names.map((n) => [n, { type: "string" }])) });
const NO_ARGS = { type: "object", properties: {} };
const ask = (message, field, type = "string") => ({ method: "elicitation/create",
	params: { message, requestedSchema: { type: "object",
		properties: { [field]: { type } }, required: [field] } } });
const SAMPLE = (t, maxTokens) => ({ method: "sampling/createMessage",
	params: { messages: [{ role: "user", content: text(t) }], maxTokens } });
const ROOTS = { method: "roots/list", params: {} };
const needInput = (inputRequests, state) => ({ resultType: "input_required", inputRequests,
	...(state === undefined ? {} : { requestState: sign(state) }) });

// requestState is the client's to carry, so it is signed: a changed byte fails the check.
function sign(value) {
	const body = Buffer.from(JSON.stringify(value)).toString("base64url");
	return `${body}.${createHmac("sha256", KEY).update(body).digest("base64url")}`;
}

function verify(state) {
	const [body, mac] = String(state ?? "").split(".");
	if (!body || mac !== createHmac("sha256", KEY).update(body).digest("base64url"))
		throw new RpcError(-32602, "requestState failed its integrity check");
	return JSON.parse(Buffer.from(body, "base64url").toString());
}

// The accepted elicitation answer's field, or undefined when the answer is missing or wrong.
function accepted(responses, key, field) {
	const r = responses?.[key];
	const v = r && typeof r === "object" && r.action === "accept" ? r.content?.[field] : undefined;
	return v === undefined || v === null ? undefined : v;
}

const clientCaps = (params) => params?._meta?.[CAPS] ?? {};
const wantsTasks = (params) => clientCaps(params).extensions?.[TASKS] !== undefined;

// ---- tasks ------------------------------------------------------------------------------

const tasks = new Map();
let taskSeq = 0;

function taskNew() {
	const now = new Date().toISOString();
	// Plain, so two of these servers hand out the same ids: the gateway's names tell them apart.
	const t = { taskId: `task-${++taskSeq}`,
		status: "working", createdAt: now, lastUpdatedAt: now, ttlMs: 600000,
		pollIntervalMs: 100 };
	tasks.set(t.taskId, t);
	return t;
}

function taskSet(t, status, fields = {}) {
	if (["completed", "failed", "cancelled"].includes(t.status))
		return;
	delete t.inputRequests;
	Object.assign(t, { status, lastUpdatedAt: new Date().toISOString() }, fields);
	notify("notifications/tasks/status", view(t));
}

function view(t) {
	const { waiters, timer, ...wire } = t;
	void waiters;
	void timer;
	return wire;
}

// A CreateTaskResult: the task, flat, as created; what happens next is seen on tasks/get.
function created(t) {
	const { taskId, status, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs } = t;
	return { resultType: "task", taskId, status, createdAt, lastUpdatedAt, ttlMs,
		pollIntervalMs };
}

function later(t, ms, fields, status = "completed") {
	t.timer = setTimeout(() => taskSet(t, status, fields), ms);
}

// A task that waits for answers: inputRequests under fresh keys, done when all came.
function parkTask(t, requests, finish) {
	t.waiters = { requests, finish, got: {} };
	taskSet(t, "input_required", { inputRequests: { ...requests } });
}

function taskOf(params) {
	const t = tasks.get(params?.taskId);
	if (!t)
		throw new RpcError(-32602, `unknown taskId ${JSON.stringify(params?.taskId)}`);
	return t;
}

function gateTasks(params) {
	if (!wantsTasks(params))
		throw new RpcError(-32021, "this method needs the tasks extension",
			{ requiredCapabilities: { extensions: { [TASKS]: {} } } });
}

const taskMethods = {
	"tasks/get": (params) => {
		gateTasks(params);
		return view(taskOf(params));
	},
	"tasks/update": (params) => {
		gateTasks(params);
		const t = taskOf(params);
		const w = t.waiters;
		if (w && t.status === "input_required") {
			for (const [k, v] of Object.entries(params.inputResponses ?? {}))
				if (Object.hasOwn(w.requests, k)) {
					w.got[k] = v;
					delete w.requests[k];
				}
			if (Object.keys(w.requests).length === 0) {
				t.waiters = undefined;
				taskSet(t, "working");
				later(t, 50, { result: w.finish(w.got) });
			} else {
				t.inputRequests = { ...w.requests };
				t.lastUpdatedAt = new Date().toISOString();
			}
		}
		return {};
	},
	"tasks/cancel": (params) => {
		gateTasks(params);
		const t = taskOf(params);
		clearTimeout(t.timer);
		taskSet(t, "cancelled");
		return {};
	},
};

// ---- tools --------------------------------------------------------------------------------

let dynamicTools = 0;
let dynamicPrompts = 0;

// name → [description, inputSchema, handler(args, params), execution?]
const tools = {
	test_input_required_result_elicitation: ["Asks the user's name, then greets", NO_ARGS,
		(_, p) => {
			const name = accepted(p.inputResponses, "user_name", "name");
			return typeof name === "string" ? done(`Hello, ${name}!`) :
				needInput({ user_name: ask("What is your name?", "name") });
		}],
	test_input_required_result_sampling: ["Asks the client's LLM a question", NO_ARGS,
		(_, p) => {
			const r = p.inputResponses?.capital_question;
			return r?.content ? done(`LLM said: ${r.content.text ?? JSON.stringify(r.content)}`) :
				needInput({ capital_question: SAMPLE("What is the capital of France?", 100) });
		}],
	test_input_required_result_list_roots: ["Asks for the client's roots", NO_ARGS,
		(_, p) => {
			const roots = p.inputResponses?.client_roots?.roots;
			return Array.isArray(roots) ? done(`Roots: ${roots.map((r) => r.uri).join(", ")}`) :
				needInput({ client_roots: ROOTS });
		}],
	test_input_required_result_request_state: ["Round-trips a signed requestState", NO_ARGS,
		(_, p) => {
			if (p.requestState === undefined || !p.inputResponses)
				return needInput({ confirm: ask("Please confirm", "ok", "boolean") },
					{ tool: "request_state" });
			if (verify(p.requestState).tool !== "request_state")
				throw new RpcError(-32602, "requestState belongs to another tool");
			return done(`state-ok: confirmed=${accepted(p.inputResponses, "confirm", "ok")}`);
		}],
	test_input_required_result_multi_round: ["Asks two questions, one round each", NO_ARGS,
		(_, p) => {
			const state = p.requestState === undefined ? { round: 0 } : verify(p.requestState);
			const name = accepted(p.inputResponses, "step1", "name");
			const color = accepted(p.inputResponses, "step2", "color");
			if (state.round === 2 && color !== undefined)
				return done(`${state.name} likes ${color}`);
			if (state.round >= 1 && (name !== undefined || state.round === 2))
				return needInput({ step2: ask("Step 2: What is your favorite color?",
					"color") }, { round: 2, name: name ?? state.name });
			return needInput({ step1: ask("Step 1: What is your name?", "name") },
				{ round: 1 });
		}],
	test_input_required_result_multiple_inputs: ["Asks three things at once", NO_ARGS,
		(_, p) => {
			const r = p.inputResponses ?? {};
			if (p.requestState !== undefined && r.user_name && r.greeting && r.client_roots) {
				verify(p.requestState);
				const roots = r.client_roots.roots?.length ?? 0;
				return done(`${r.greeting.content?.text ?? "Hi"}, ` +
					`${accepted(r, "user_name", "name")} (${roots} roots)`);
			}
			return needInput({ user_name: ask("What is your name?", "name"),
				greeting: SAMPLE("Generate a greeting", 50), client_roots: ROOTS },
			{ tool: "multiple" });
		}],
	test_input_required_result_tampered_state: ["Rejects a requestState that changed", NO_ARGS,
		(_, p) => {
			if (p.requestState === undefined)
				return needInput({ confirm: ask("Please confirm", "ok", "boolean") },
					{ tool: "tampered", nonce: randomBytes(8).toString("hex") });
			verify(p.requestState);
			return done("requestState intact");
		}],
	test_input_required_result_capabilities: ["Asks only what the client can answer",
		NO_ARGS, (_, p) => {
			const caps = clientCaps(p);
			const r = p.inputResponses;
			if (r && Object.keys(r).length)
				return done(`answered: ${Object.keys(r).sort().join(", ")}`);
			const reqs = {};
			if (caps.elicitation)
				reqs.user_name = ask("What is your name?", "name");
			if (caps.sampling)
				reqs.greeting = SAMPLE("Generate a greeting", 50);
			if (caps.roots)
				reqs.client_roots = ROOTS;
			return Object.keys(reqs).length ? needInput(reqs) :
				done("the client declared nothing to ask through");
		}],
	test_missing_capability: ["Needs the client's sampling capability", NO_ARGS, (_, p) => {
		if (!clientCaps(p).sampling)
			throw new RpcError(-32021, "test_missing_capability needs sampling",
				{ requiredCapabilities: { sampling: {} } });
		return needInput({ q: SAMPLE("Say something", 20) });
	}],
	test_streaming_elicitation: ["Asks the user, as an input_required result", NO_ARGS,
		(_, p) => {
			const name = accepted(p.inputResponses, "user_name", "name");
			return name !== undefined ? done(`Hello, ${name}!`) :
				needInput({ user_name: ask("What is your name?", "name") });
		}],
	test_logging_tool: ["Logs three messages while it runs", NO_ARGS, async () => {
		for (const data of ["started", "working", "finished"])
			notify("notifications/message", { level: "info", logger: "conformance", data });
		return done("logged three messages");
	}],
	test_trigger_tool_change: ["Adds a tool and says the list changed", NO_ARGS, () => {
		const name = `dynamic_tool_${++dynamicTools}`;
		tools[name] = ["Added at run time", NO_ARGS, () => done(name)];
		notify("notifications/tools/list_changed");
		return done(`added ${name}`);
	}],
	test_trigger_prompt_change: ["Adds a prompt and says the list changed", NO_ARGS, () => {
		const name = `dynamic_prompt_${++dynamicPrompts}`;
		prompts[name] = ["Added at run time", () => ({ messages: [{ role: "user",
			content: text(name) }] })];
		notify("notifications/prompts/list_changed");
		return done(`added ${name}`);
	}],
	test_header_params: ["Mirrors its region and tenant into Mcp-Param headers", {
		type: "object", required: ["region"],
		properties: { region: { type: "string", "x-mcp-header": "Region" },
			tenant: { type: "string", "x-mcp-header": "Tenant" },
			note: { type: "string" } },
	}, (args) => done(`region=${args.region} tenant=${args.tenant ?? "-"}`)],

	greet: ["Greets at once (no task)", stringArgs(["name"]),
		(args) => done(`Hello, ${args.name}!`), { taskSupport: "forbidden" }],
	slow_compute: ["Sleeps `seconds`, as a task when the client has the extension", {
		type: "object", properties: { seconds: { type: "number" }, label: { type: "string" } },
	}, async (args, p) => {
		const ms = Math.max(0, Number(args.seconds ?? 0)) * 1000;
		const result = done(`computed ${args.label ?? ""} after ${args.seconds ?? 0}s`);
		if (!wantsTasks(p)) {
			await new Promise((r) => setTimeout(r, Math.min(ms, 4000)));
			return result;
		}
		const t = taskNew();
		later(t, ms, { result });
		return created(t);
	}, { taskSupport: "optional" }],
	failing_job: ["A task whose tool fails", NO_ARGS, (_, p) => {
		const t = requiredTask(p);
		later(t, 300, { result: { isError: true, content: [text("the job failed")] } });
		return created(t);
	}, { taskSupport: "required" }],
	protocol_error_job: ["A task that ends in a protocol error", NO_ARGS, (_, p) => {
		const t = requiredTask(p);
		later(t, 100, { error: { code: -32603, message: "the job's worker crashed" } },
			"failed");
		return created(t);
	}, { taskSupport: "required" }],
	// Without the extension it asks in an input_required result instead of a task.
	confirm_delete: ["Asks for confirmation first, as a task when it can",
		stringArgs(["filename"]), (args, p) => {
			const question = ask(`Delete ${args.filename}?`, "confirm", "boolean");
			if (!wantsTasks(p)) {
				const answer = accepted(p.inputResponses, "confirm", "confirm");
				return answer === undefined ? needInput({ confirm: question }) :
					done(`deleted ${args.filename}: ${answer}`);
			}
			const t = taskNew();
			parkTask(t, { [`confirm-${t.taskId}`]: question }, (got) => done(
				`deleted ${args.filename}: ` +
				JSON.stringify(Object.values(got)[0]?.content ?? {})));
			return created(t);
		}, { taskSupport: "optional" }],
	multi_input: ["A task that asks two questions at once", NO_ARGS, (_, p) => {
		const t = requiredTask(p);
		parkTask(t, { first: ask("First name?", "name"), second: ask("Second name?", "name") },
			(got) => done(`names: ${Object.values(got).map((g) => g.content?.name).join(", ")}`));
		return created(t);
	}, { taskSupport: "required" }],
	test_tool_with_task: ["Asks a name, then finishes as a task", NO_ARGS, (_, p) => {
		const name = accepted(p.inputResponses, "user_name", "name");
		if (name === undefined)
			return needInput({ user_name: ask("What is your name?", "name") },
				{ tool: "with_task" });
		verify(p.requestState);
		const t = requiredTask(p);
		later(t, 100, { result: done(`Hello from the task, ${name}!`) });
		return created(t);
	}, { taskSupport: "required" }],
};

function requiredTask(p) {
	if (!wantsTasks(p))
		throw new RpcError(-32021, "this tool runs only as a task",
			{ requiredCapabilities: { extensions: { [TASKS]: {} } } });
	return taskNew();
}

// ---- prompts --------------------------------------------------------------------------------

const prompts = {
	test_input_required_result_prompt: ["A prompt that asks for its context first",
		(p) => {
			const context = accepted(p.inputResponses, "user_context", "context");
			if (context === undefined)
				return needInput({ user_context: ask("What context should the prompt use?",
					"context") });
			return { description: "prompt with gathered context", messages: [{ role: "user",
				content: text(`Use this context: ${context}`) }] };
		}],
};

// ---- dispatch -------------------------------------------------------------------------------

function lookup(table, key, what) {
	if (!Object.hasOwn(table, key))
		throw new RpcError(-32602, `unknown ${what}: ${key}`);
	return table[key];
}

const methods = {
	initialize: (p) => ({ protocolVersion: p?.protocolVersion ?? "2025-06-18",
		capabilities: { tools: { listChanged: true }, prompts: { listChanged: true },
			extensions: { [TASKS]: {} } },
		serverInfo: { name: "cubevs-conformance-server-2026-07-28", version: "1.0.0" } }),
	ping: () => ({}),
	"tools/list": () => ({ tools: Object.entries(tools).map(([name, [description,
		inputSchema, , execution]]) => ({ name, description, inputSchema,
		...(execution ? { execution } : {}) })) }),
	"tools/call": (p) => lookup(tools, p?.name, "tool")[2](p.arguments ?? {}, p),
	"prompts/list": () => ({ prompts: Object.entries(prompts).map(([name, [description]]) =>
		({ name, description })) }),
	"prompts/get": (p) => lookup(prompts, p?.name, "prompt")[1](p),
	...taskMethods,
};

const transport = new StdioServerTransport();

function notify(method, params) {
	transport.send({ jsonrpc: "2.0", method, ...(params ? { params } : {}) }).catch(() => {});
}

transport.onmessage = async (msg) => {
	if (msg.id === undefined || msg.method === undefined)
		return;
	let reply;
	try {
		const fn = Object.hasOwn(methods, msg.method) ? methods[msg.method] : undefined;
		if (!fn)
			throw new RpcError(-32601, `Method not found: ${msg.method}`);
		reply = { result: await fn(msg.params) };
	} catch (e) {
		const error = { code: Number.isInteger(e.code) ? e.code : -32603,
			message: e.message };
		if (e.data !== undefined)
			error.data = e.data;
		reply = { error };
	}
	await transport.send({ jsonrpc: "2.0", id: msg.id, ...reply }).catch(() => {});
};
transport.onclose = () => process.exit(0);
await transport.start();
