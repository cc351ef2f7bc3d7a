// Streamable HTTP echo server on the official TypeScript SDK, for mcpbind's HTTP benchmark.
//
//   node server.mjs --fd N [--json | --sse] [--stateless] [--path /mcp]
//   node server.mjs --port P [--json | --sse] [--stateless]
//
// Written the way the SDK's README writes a stateful server: `createMcpExpressApp()` (express
// with the JSON body parser and localhost Host validation), one `StreamableHTTPServerTransport`
// plus one `McpServer` (with an `echo` tool, zod input schema) per session, kept in a map by
// session id. `--json` sets `enableJsonResponse: true` (one application/json body per POST);
// `--sse` keeps the SDK default (an SSE stream per POST). `--stateless` is the README's
// stateless server instead: a fresh `McpServer` + `StreamableHTTPServerTransport({
// sessionIdGenerator: undefined })` per POST, no session map (what a 2026-07-28 client would
// need; SDK 1.32.2 rejects that version with 400 "Unsupported protocol version").
//
// `--fd N` serves on a listening socket inherited from the benchmark driver (bound to
// 127.0.0.1 by it, so there is no port race); `--port P` binds 127.0.0.1:P itself.
// Prints `ready` on stdout once listening; exits on SIGTERM/SIGINT.

import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

function option(name, fallback) {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : fallback;
}

const jsonResponse = !process.argv.includes('--sse');
const path = option('--path', '/mcp');

function createEchoServer() {
    const server = new McpServer({ name: 'ts-echo', version: '1.0.0' });
    server.registerTool(
        'echo',
        { description: 'Return the given text unchanged.', inputSchema: { text: z.string() } },
        async ({ text }) => ({ content: [{ type: 'text', text }] }),
    );
    return server;
}

const transports = new Map();

function badRequest(res, message) {
    res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

const app = createMcpExpressApp({ host: '127.0.0.1' });
const stateless = process.argv.includes('--stateless');

async function statelessPost(req, res) {
    const server = createEchoServer();
    const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: jsonResponse,
    });
    res.on('close', () => {
        transport.close();
        server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
}

app.post(path, async (req, res) => {
    if (stateless) {
        await statelessPost(req, res);
        return;
    }
    const sessionId = req.headers['mcp-session-id'];
    let transport = sessionId ? transports.get(sessionId) : undefined;
    if (transport === undefined) {
        if (sessionId !== undefined || !isInitializeRequest(req.body)) {
            badRequest(res, 'Bad Request: no valid session id');
            return;
        }
        transport = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            enableJsonResponse: jsonResponse,
            onsessioninitialized: (sid) => {
                transports.set(sid, transport);
            },
        });
        transport.onclose = () => {
            if (transport.sessionId) transports.delete(transport.sessionId);
        };
        await createEchoServer().connect(transport);
    }
    await transport.handleRequest(req, res, req.body);
});

async function sessionRequest(req, res) {
    const transport = transports.get(req.headers['mcp-session-id']);
    if (transport === undefined) {
        badRequest(res, 'Bad Request: no valid session id');
        return;
    }
    await transport.handleRequest(req, res);
}

app.get(path, sessionRequest);
app.delete(path, sessionRequest);

const fd = option('--fd');
const listenOn = fd !== undefined ? { fd: Number(fd) } : { host: '127.0.0.1', port: Number(option('--port', '0')) };
const httpServer = app.listen(listenOn, () => {
    process.stdout.write(`ready ${jsonResponse ? 'json' : 'sse'}\n`);
});

function shutdown() {
    httpServer.closeAllConnections?.();
    httpServer.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 500).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
