// Echo MCP server on the official TypeScript SDK, for mcpbind's round-trip benchmark.
//
// One tool, `echo`: input {"text": string}, result one text content block with the same text.
//
//   node echo_server.mjs [--flavor mcpserver|lowlevel]
//
// --flavor mcpserver (default, what run.py benchmarks): the SDK's high-level `McpServer`
//   with `registerTool` and a zod input schema, i.e. how TS servers are normally written
//   (arguments are validated by zod on every call).
// --flavor lowlevel: the SDK's `Server` with raw tools/list and tools/call handlers.
//
// `createEchoServer()` is exported for the in-memory variant of bench_client.mjs; the stdio
// transport is only started when this file is the entry point.

import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const SERVER_INFO = { name: 'ts-echo', version: '1.0.0' };

function createMcpServer() {
    const server = new McpServer(SERVER_INFO);
    server.registerTool(
        'echo',
        { description: 'Return the given text unchanged.', inputSchema: { text: z.string() } },
        async ({ text }) => ({ content: [{ type: 'text', text }] }),
    );
    return server.server; // the underlying low-level Server (what connect() drives)
}

function createLowlevelServer() {
    const server = new Server(SERVER_INFO, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [
            {
                name: 'echo',
                description: 'Return the given text unchanged.',
                inputSchema: {
                    type: 'object',
                    properties: { text: { type: 'string' } },
                    required: ['text'],
                },
            },
        ],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
        const text = request.params.arguments?.text;
        if (request.params.name !== 'echo' || typeof text !== 'string') {
            return { content: [{ type: 'text', text: 'bad echo call' }], isError: true };
        }
        return { content: [{ type: 'text', text }] };
    });
    return server;
}

/** Returns a connectable low-level `Server` of the given flavour. */
export function createEchoServer(flavor = 'mcpserver') {
    if (flavor === 'mcpserver') return createMcpServer();
    if (flavor === 'lowlevel') return createLowlevelServer();
    throw new Error(`unknown flavor ${flavor}`);
}

export function parseFlavor(argv) {
    const i = argv.indexOf('--flavor');
    return i >= 0 ? argv[i + 1] : 'mcpserver';
}

async function main() {
    const server = createEchoServer(parseFlavor(process.argv.slice(2)));
    const transport = new StdioServerTransport();
    // Exit when the client closes our stdin (the SDK's stdio client closes stdin first).
    process.stdin.on('end', () => process.exit(0));
    await server.connect(transport);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
    main().catch((err) => {
        console.error(err);
        process.exit(1);
    });
}
