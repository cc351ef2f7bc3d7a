// Floor server for mcpbind's HTTP benchmark: the least an HTTP server can do per MCP request.
//
//   node floor_server.mjs --fd N | --port P
//
// Plain node:http, no SDK: answers initialize (with an Mcp-Session-Id), 202 for notifications,
// echoes tools/call `echo` text as a JSON result, 200 for DELETE. It gives the load
// generator's ceiling on this machine (the "floor" row): if a server comes near it, the load
// generator, not the server, is the limit. Prints `ready json` once listening.

import http from 'node:http';
import { randomUUID } from 'node:crypto';

function option(name, fallback) {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : fallback;
}

function reply(res, status, body, headers = {}) {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body === undefined ? undefined : JSON.stringify(body));
}

const server = http.createServer((req, res) => {
    if (req.method === 'DELETE') return reply(res, 200);
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
        const msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (msg.id === undefined) return reply(res, 202);
        if (msg.method === 'initialize') {
            return reply(
                res,
                200,
                {
                    jsonrpc: '2.0',
                    id: msg.id,
                    result: {
                        protocolVersion: msg.params.protocolVersion,
                        capabilities: { tools: {} },
                        serverInfo: { name: 'floor', version: '1.0.0' },
                    },
                },
                { 'mcp-session-id': randomUUID() },
            );
        }
        const text = msg.params?.arguments?.text;
        reply(res, 200, { jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text }] } });
    });
});

const fd = option('--fd');
server.keepAliveTimeout = 60_000;
server.listen(fd !== undefined ? { fd: Number(fd) } : { host: '127.0.0.1', port: Number(option('--port', '0')) }, () => {
    process.stdout.write('ready json\n');
});
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
