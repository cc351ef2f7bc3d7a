// A Host peer on the official TypeScript SDK (handshake era only), over stdio.
//
// Tools: echo (read-only), write (no annotations: the host asks), sample (asks the host's
// model with sampling/createMessage and reports the answer or the error) and grow (registers
// the tool `extra`, which makes the SDK send notifications/tools/list_changed).

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'ts-peer', version: '1.0.0' });
const text = (value) => ({ content: [{ type: 'text', text: value }] });

server.registerTool(
    'echo',
    { description: 'Echo the text back.', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
    async ({ text: value }) => text(`ts: ${value}`),
);
server.registerTool('write', { inputSchema: { value: z.string() } }, async ({ value }) => text(`wrote ${value}`));
server.registerTool('sample', { inputSchema: { prompt: z.string() } }, async ({ prompt }) => {
    try {
        const result = await server.server.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
            maxTokens: 16,
        });
        return text(`${result.model}: ${result.content.text}`);
    } catch (err) {
        return text(`error ${err.code}: ${err.message}`);
    }
});
server.registerTool('grow', {}, async () => {
    server.registerTool('extra', {}, async () => text('extra'));
    return text('grown');
});

process.stdin.on('end', () => process.exit(0));
await server.connect(new StdioServerTransport());
