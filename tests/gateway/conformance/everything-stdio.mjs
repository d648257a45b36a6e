// Runs the conformance suite's own everything-server (everything-server.ts, kept verbatim from
// the conformance repository at v0.1.16) as a stdio MCP server, so that mcp-gateway can front
// it. Needs Node >= 22.13 (module.stripTypeScriptTypes). The server file ends with an Express
// app; the hook below replaces that part with a stdio transport and strips the type syntax.
import { register } from 'node:module';

// On stdio, stdout is the protocol stream; the fixture's console.log calls must not land there.
console.log = console.error;
register('./everything-hook.mjs', import.meta.url);
await import('./everything-server.ts');
