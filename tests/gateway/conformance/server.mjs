#!/usr/bin/env node
// A stdio MCP server with what the conformance suite's server scenarios look for (the tool,
// resource and prompt names and answers its scenario descriptions ask of a server under
// test), written for these tests on the official SDK's low-level Server. The suite's own
// test server is not published in any package, so this one stands in for it; transport
// behaviour (SSE priming, polling, DNS rebinding) is the gateway's, not this server's.
//
// Every feature is one entry in a table below; the request handlers only look names up.

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
	CallToolRequestSchema, CompleteRequestSchema, GetPromptRequestSchema,
	ListPromptsRequestSchema, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema,
	ListToolsRequestSchema, McpError, ReadResourceRequestSchema, SubscribeRequestSchema,
	UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

// 1x1 PNG and a WAV header with two samples: the smallest valid files of each kind.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

const NO_ARGS = { type: "object", properties: {} };
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (t) => ({ type: "text", text: t });
const textResult = (t) => ({ content: [text(t)] });
const stringArgs = (names) => ({ type: "object", required: names,
	properties: Object.fromEntries(names.map((n) => [n, { type: "string" }])) });

const server = new Server({ name: "cubevs-conformance-server", version: "1.0.0" }, {
	capabilities: {
		tools: { listChanged: true },
		resources: { subscribe: true, listChanged: true },
		prompts: { listChanged: true },
		logging: {},
		completions: {},
	},
});

async function elicited(params, extra) {
	const r = await server.elicitInput(params, { signal: extra.signal });
	return textResult(`Elicitation completed: action=${r.action}, ` +
		`content=${JSON.stringify(r.content ?? {})}`);
}

const choices = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);
const titled = (values, titles) => values.map((v, i) => ({ const: v, title: titles[i] }));

// name → [description, inputSchema, handler(args, extra)]
const tools = {
	test_simple_text: ["Answers with one text block", NO_ARGS,
		() => textResult("This is a simple text response for testing.")],
	test_image_content: ["Answers with a PNG image", NO_ARGS,
		() => ({ content: [{ type: "image", data: PNG, mimeType: "image/png" }] })],
	test_audio_content: ["Answers with a WAV clip", NO_ARGS,
		() => ({ content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }] })],
	test_embedded_resource: ["Answers with an embedded text resource", NO_ARGS,
		() => ({ content: [{ type: "resource", resource: { uri: "test://embedded-resource",
			mimeType: "text/plain", text: "This is an embedded resource content." } }] })],
	test_multiple_content_types: ["Answers with text, an image and a resource", NO_ARGS,
		() => ({ content: [text("Multiple content types test:"),
			{ type: "image", data: PNG, mimeType: "image/png" },
			{ type: "resource", resource: { uri: "test://mixed-content-resource",
				mimeType: "application/json",
				text: JSON.stringify({ test: "data", value: 123 }) } }] })],
	test_tool_with_logging: ["Logs three info messages 50 ms apart", NO_ARGS,
		async (_, extra) => {
			const steps = ["Tool execution started", "Tool processing data",
				"Tool execution completed"];
			for (const [i, data] of steps.entries()) {
				if (i)
					await pause(50);
				await extra.sendNotification({ method: "notifications/message",
					params: { level: "info", logger: "conformance", data } });
			}
			return textResult("Logged three messages");
		}],
	test_tool_with_progress: ["Reports progress 0, 50, 100 of 100", NO_ARGS,
		async (_, extra) => {
			const token = extra._meta?.progressToken;
			for (const progress of [0, 50, 100]) {
				if (progress)
					await pause(50);
				if (token !== undefined)
					await extra.sendNotification({ method: "notifications/progress",
						params: { progressToken: token, progress, total: 100 } });
			}
			return textResult(`progress reported for ${JSON.stringify(token ?? null)}`);
		}],
	test_error_handling: ["Always fails", NO_ARGS, () => {
		throw new Error("This tool intentionally returns an error for testing");
	}],
	test_reconnection: ["Answers after 100 ms (the SSE polling scenario's tool)", NO_ARGS,
		async () => {
			await pause(100);
			return textResult("Reconnection test completed");
		}],
	test_sampling: ["Asks the client's LLM", stringArgs(["prompt"]), async (args, extra) => {
		const r = await server.createMessage({ maxTokens: 100, messages: [{ role: "user",
			content: text(String(args.prompt)) }] }, { signal: extra.signal });
		const said = r.content?.type === "text" ? r.content.text : JSON.stringify(r.content);
		return textResult(`LLM response: ${said}`);
	}],
	test_elicitation: ["Asks the user for a name and an address", stringArgs(["message"]),
		async (args, extra) => {
			const r = await server.elicitInput({ message: String(args.message),
				requestedSchema: { type: "object", required: ["username", "email"],
					properties: {
						username: { type: "string", description: "User's response" },
						email: { type: "string", description: "User's email address" },
					} } }, { signal: extra.signal });
			return textResult(`User response: action=${r.action}, ` +
				`content=${JSON.stringify(r.content ?? {})}`);
		}],
	test_elicitation_sep1034_defaults: ["Elicits fields that all have defaults", NO_ARGS,
		(_, extra) => elicited({ message: "Confirm or change the defaults",
			requestedSchema: { type: "object", properties: {
				name: { type: "string", default: "John Doe" },
				age: { type: "integer", default: 30 },
				score: { type: "number", default: 95.5 },
				status: { type: "string", enum: ["active", "inactive", "pending"],
					default: "active" },
				verified: { type: "boolean", default: true },
			} } }, extra)],
	test_elicitation_sep1330_enums: ["Elicits the five kinds of enum field", NO_ARGS,
		(_, extra) => elicited({ message: "Pick from each list",
			requestedSchema: { type: "object", properties: {
				untitledSingle: { type: "string", enum: choices("option", 3) },
				titledSingle: { type: "string", oneOf: titled(choices("value", 3),
					["First Option", "Second Option", "Third Option"]) },
				legacyEnum: { type: "string", enum: choices("opt", 3),
					enumNames: ["Option One", "Option Two", "Option Three"] },
				untitledMulti: { type: "array",
					items: { type: "string", enum: choices("option", 3) } },
				titledMulti: { type: "array", items: { anyOf: titled(choices("value", 3),
					["First Choice", "Second Choice", "Third Choice"]) } },
			} } }, extra)],
	json_schema_2020_12_tool: ["Tool with JSON Schema 2020-12 features", {
		$schema: "https://json-schema.org/draft/2020-12/schema",
		type: "object",
		$defs: { address: { $anchor: "addressDef", type: "object",
			properties: { street: { type: "string" }, city: { type: "string" } } } },
		properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" },
			contactMethod: { type: "string", enum: ["phone", "email"] },
			phone: { type: "string" }, email: { type: "string" } },
		// Composition, conditional and $anchor keywords (SEP-2106) must reach clients as well.
		allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
		if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
		then: { required: ["phone"] },
		else: { required: ["email"] },
		additionalProperties: false,
	}, (args) => textResult(`got ${JSON.stringify(args)}`)],
};

// uri → [name, mimeType, contents(uri)]
const resources = {
	"test://static-text": ["static-text", "text/plain",
		(uri) => ({ uri, mimeType: "text/plain",
			text: "This is the content of the static text resource." })],
	"test://static-binary": ["static-binary", "image/png",
		(uri) => ({ uri, mimeType: "image/png", blob: PNG })],
	"test://watched-resource": ["watched-resource", "text/plain",
		(uri) => ({ uri, mimeType: "text/plain", text: "Watched resource content" })],
};
const TEMPLATE = /^test:\/\/template\/([^/]+)\/data$/;
const subscribed = new Set();

// name → [description, argument names, messages(args)]
const prompts = {
	test_simple_prompt: ["A prompt without arguments", [],
		() => [{ role: "user", content: text("This is a simple prompt for testing.") }]],
	test_prompt_with_arguments: ["A prompt that quotes its two arguments", ["arg1", "arg2"],
		(a) => [{ role: "user",
			content: text(`Prompt with arguments: arg1='${a.arg1}', arg2='${a.arg2}'`) }]],
	test_prompt_with_embedded_resource: ["A prompt that embeds a resource", ["resourceUri"],
		(a) => [{ role: "user", content: { type: "resource", resource: {
			uri: a.resourceUri, mimeType: "text/plain",
			text: "Embedded resource content for testing." } } },
		{ role: "user", content: text("Please process the embedded resource above.") }]],
	test_prompt_with_image: ["A prompt with an image", [],
		() => [{ role: "user", content: { type: "image", data: PNG, mimeType: "image/png" } },
			{ role: "user", content: text("Please analyze the image above.") }]],
};

function lookup(table, key, what) {
	const entry = Object.hasOwn(table, key) ? table[key] : undefined;
	if (!entry)
		throw new McpError(-32602, `unknown ${what}: ${key}`);
	return entry;
}

server.setRequestHandler(ListToolsRequestSchema, () => ({
	tools: Object.entries(tools).map(([name, [description, inputSchema]]) =>
		({ name, description, inputSchema })),
}));

server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
	const [, , handler] = lookup(tools, req.params.name, "tool");
	try {
		return await handler(req.params.arguments ?? {}, extra);
	} catch (e) {
		// A tool's failure (its own, or a client's refusal of its request) is a result.
		return { isError: true, content: [text(e.message)] };
	}
});

server.setRequestHandler(ListResourcesRequestSchema, () => ({
	resources: Object.entries(resources).map(([uri, [name, mimeType]]) =>
		({ uri, name, mimeType, description: `the ${name} resource` })),
}));

server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
	resourceTemplates: [{ uriTemplate: "test://template/{id}/data", name: "template-data",
		description: "JSON data for an id", mimeType: "application/json" }],
}));

server.setRequestHandler(ReadResourceRequestSchema, (req) => {
	const uri = req.params.uri;
	const m = uri.match(TEMPLATE);
	if (m)
		return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(
			{ id: m[1], templateTest: true, data: `Data for ID: ${m[1]}` }) }] };
	// The code servers of the 2025 revisions use; the gateway maps it for 2026-07-28 clients.
	if (!Object.hasOwn(resources, uri))
		throw new McpError(-32002, "Resource not found", { uri });
	const [, , contents] = resources[uri];
	return { contents: [contents(uri)] };
});

server.setRequestHandler(SubscribeRequestSchema, (req) => {
	subscribed.add(req.params.uri);
	return {};
});

server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
	subscribed.delete(req.params.uri);
	return {};
});

server.setRequestHandler(ListPromptsRequestSchema, () => ({
	prompts: Object.entries(prompts).map(([name, [description, args]]) => ({ name,
		description, arguments: args.map((a) => ({ name: a, required: true })) })),
}));

server.setRequestHandler(GetPromptRequestSchema, (req) => {
	const [description, names, messages] = lookup(prompts, req.params.name, "prompt");
	const args = req.params.arguments ?? {};
	for (const n of names)
		if (typeof args[n] !== "string")
			throw new McpError(-32602, `prompt ${req.params.name} needs argument ${n}`);
	return { description, messages: messages(args) };
});

// Completions: argument values that start with what was typed, from a small fixed list.
const WORDS = ["paris", "park", "party", "test", "testValue1", "testValue2"];
server.setRequestHandler(CompleteRequestSchema, (req) => {
	const typed = String(req.params.argument?.value ?? "");
	const values = WORDS.filter((w) => w.startsWith(typed));
	return { completion: { values, total: values.length, hasMore: false } };
});

await server.connect(new StdioServerTransport());
