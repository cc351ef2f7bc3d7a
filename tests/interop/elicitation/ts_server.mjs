// The official TypeScript SDK's server over stdio, asking for a name by elicitation:
// `node ts_server.mjs SDK_DIR`. For mcpbind's client (which offers 2025-03-26).
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const load = (p) => import(pathToFileURL(join(process.argv[2], 'dist/esm', p)).href);
const { Server } = await load('server/index.js');
const { StdioServerTransport } = await load('server/stdio.js');
const { CallToolRequestSchema, ListToolsRequestSchema } = await load('types.js');

const server = new Server({ name: 'elicitation-ts', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: 'ask_name', inputSchema: { type: 'object' } }],
}));
server.setRequestHandler(CallToolRequestSchema, async () => {
    const answer = await server.elicitInput({
        message: 'What is your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    });
    return { content: [{ type: 'text', text: `${answer.action}:${answer.content?.name}` }] };
});
await server.connect(new StdioServerTransport());
