// Module hook for everything-stdio.mjs: serves everything-server.ts with its HTTP tail swapped
// for a stdio transport. Only that one file is touched; every other module loads as usual.
import { readFile } from 'node:fs/promises';
import { stripTypeScriptTypes } from 'node:module';
import { fileURLToPath } from 'node:url';

const MARK = '// ===== EXPRESS APP =====';
const TYPE_NAMES = /StreamableHTTPServerTransport,\s*EventStore,\s*EventId,\s*StreamId/;
const TAIL = `
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
await createMcpServer().connect(new StdioServerTransport());
`;

export async function load(url, context, next) {
	if (!url.endsWith('/everything-server.ts'))
		return next(url, context);
	const text = await readFile(fileURLToPath(url), 'utf8');
	const cut = text.indexOf(MARK);
	if (cut < 0)
		throw new Error(`everything-server.ts: marker "${MARK}" not found`);
	/* Type-only names imported without "type": stripping types cannot tell, ESM linking would. */
	const head = text.slice(0, cut).replace(TYPE_NAMES, 'StreamableHTTPServerTransport');
	if (head.length === cut)
		throw new Error('everything-server.ts: type-only import not found');
	const source = stripTypeScriptTypes(head + TAIL);
	return { format: 'module', source, shortCircuit: true };
}
