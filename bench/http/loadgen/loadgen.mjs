// Load generator for mcpbind's Streamable HTTP benchmark: N concurrent MCP sessions.
//
//   node loadgen.mjs --url http://127.0.0.1:PORT/mcp [--clients N] [--warmup S] [--duration S]
//                    [--text STR] [--protocol-version V] [--sessionless] [--calls N]
//
// Handshake era (--protocol-version 2025-11-25, the default; any version before 2026-07-28):
// each client is a real MCP session on its own keep-alive connection (one undici `Client`):
// POST initialize (takes the Mcp-Session-Id the server assigns), POST
// notifications/initialized (expects 202), then POSTs tools/call `echo` in a loop, one at a
// time, each with its Mcp-Session-Id and MCP-Protocol-Version headers, checking that the result
// echoes the text. Responses may be application/json or text/event-stream (parsed as SSE); the
// mode seen is reported. All clients run for --warmup seconds (not counted), then --duration
// seconds are timed: calls that complete in that window are counted (req/s) and their
// latencies (request sent to body parsed) give p50/p99. Then every session ends with DELETE.
//
// --sessionless (handshake era against a server without sessions, e.g. mcpbind's
// `stateless=True`, the official SDK's `stateless_http=True`, the TS SDK's stateless server):
// initialize and notifications/initialized as above, but no Mcp-Session-Id is expected or sent;
// every tools/call carries MCP-Protocol-Version only, and no DELETE ends the run.
//
// Stateless era (--protocol-version 2026-07-28 or later; basic/transports/streamable-http.mdx):
// no initialize, no session, no DELETE. Each client is still one keep-alive connection, and
// every tools/call POST is self-contained: params._meta carries
// io.modelcontextprotocol/protocolVersion, .../clientCapabilities and .../clientInfo, and the
// headers carry MCP-Protocol-Version, Mcp-Method: tools/call and Mcp-Name: echo. The result
// must echo the text and say resultType "complete" (a result without resultType counts as
// complete, as the spec tells clients to treat older servers' results).
//
// --calls N: no time window; each client makes exactly N calls after its session is open, and
// all of them are counted (for counting the server's instructions per request under
// callgrind, where the server is too slow for a timed window: bench/http/instructions.py).
//
// Prints `# measuring` when the timed window opens and `# done` when it closes (so the driver
// can sample the server's CPU time over the same window), then one JSON line: {"clients", "requests", "seconds", "rps", "p50_ms", "p99_ms", "mode",
// "errors", "cpu_pct", "protocol_version"}; cpu_pct is this process's CPU time over the timed
// window (user+system, percent of one core): near 100 means the load generator is the limit.
// Exits 1 (with a message on stderr) when a session cannot be set up or a call fails.

import { Client } from 'undici';

function option(name, fallback) {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : fallback;
}

const url = new URL(option('--url', 'http://127.0.0.1:8000/mcp'));
const clients = Number(option('--clients', '1'));
const warmup = Number(option('--warmup', '1'));
const duration = Number(option('--duration', '3'));
const text = option('--text', 'hello from the mcpbind http benchmark');
const PROTOCOL_VERSION = option('--protocol-version', '2025-11-25');
const ACCEPT = 'application/json, text/event-stream';
// Protocol versions are dates: 2026-07-28 and later are the stateless era.
const STATELESS = PROTOCOL_VERSION >= '2026-07-28';
const SESSIONLESS = process.argv.includes('--sessionless');
const CALLS = Number(option('--calls', '0'));
const CLIENT_INFO = { name: 'mcpbind-bench-http', version: '1.0.0' };
const META = {
    'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
};

class BenchError extends Error {}

/** Returns the JSON-RPC messages in an SSE body (`data:` lines joined per event). */
function sseMessages(body) {
    const messages = [];
    for (const block of body.split(/\r\n\r\n|\n\n|\r\r/)) {
        const data = [];
        for (const line of block.split(/\r\n|\n|\r/)) {
            if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5));
        }
        if (data.length > 0 && data.join('\n').trim() !== '') messages.push(JSON.parse(data.join('\n')));
    }
    return messages;
}

/** One MCP session over one keep-alive connection. */
class Session {
    constructor() {
        // A stalled server fails the run after 30 s instead of hanging it.
        this.http = new Client(url.origin, {
            pipelining: 1,
            keepAliveTimeout: 60_000,
            headersTimeout: 30_000,
            bodyTimeout: 30_000,
        });
        this.sessionId = undefined;
        this.protocolVersion = undefined;
        this.nextId = 1;
        this.modes = new Set();
    }

    headers(extra) {
        const h = { 'content-type': 'application/json', accept: ACCEPT, ...extra };
        if (this.sessionId !== undefined) h['mcp-session-id'] = this.sessionId;
        if (this.protocolVersion !== undefined) h['mcp-protocol-version'] = this.protocolVersion;
        return h;
    }

    async post(message, extraHeaders) {
        const { statusCode, headers, body } = await this.http.request({
            method: 'POST',
            path: url.pathname,
            headers: this.headers(extraHeaders),
            body: JSON.stringify(message),
        });
        const raw = await body.text();
        return { statusCode, headers, raw };
    }

    /** POSTs a request and returns the JSON-RPC response with its id. */
    async call(method, params, extraHeaders) {
        const id = this.nextId++;
        const { statusCode, headers, raw } = await this.post({ jsonrpc: '2.0', id, method, params }, extraHeaders);
        if (statusCode !== 200) throw new BenchError(`${method}: HTTP ${statusCode}: ${raw.slice(0, 200)}`);
        const type = String(headers['content-type'] ?? '');
        let messages;
        if (type.startsWith('application/json')) {
            this.modes.add('json');
            const parsed = JSON.parse(raw);
            messages = Array.isArray(parsed) ? parsed : [parsed];
        } else if (type.startsWith('text/event-stream')) {
            this.modes.add('sse');
            messages = sseMessages(raw);
        } else {
            throw new BenchError(`${method}: unexpected content-type ${type}`);
        }
        const reply = messages.find((m) => m.id === id);
        if (reply === undefined) throw new BenchError(`${method}: no response with id ${id} in ${raw.slice(0, 200)}`);
        if (reply.error !== undefined) throw new BenchError(`${method}: error ${JSON.stringify(reply.error)}`);
        return { reply, headers };
    }

    async open() {
        if (STATELESS) {
            // Nothing to set up: the version rides on every request (headers and _meta).
            this.protocolVersion = PROTOCOL_VERSION;
            return;
        }
        const { reply, headers } = await this.call('initialize', {
            protocolVersion: PROTOCOL_VERSION,
            capabilities: {},
            clientInfo: { name: 'mcpbind-bench-http', version: '1.0.0' },
        });
        const sid = headers['mcp-session-id'];
        if (SESSIONLESS) {
            if (sid !== undefined) throw new BenchError('initialize: a sessionless server sent Mcp-Session-Id');
        } else {
            if (typeof sid !== 'string' || sid === '') throw new BenchError('initialize: no Mcp-Session-Id header');
            this.sessionId = sid;
        }
        this.protocolVersion = reply.result.protocolVersion;
        const ack = await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
        if (ack.statusCode !== 202) throw new BenchError(`notifications/initialized: HTTP ${ack.statusCode}`);
    }

    async echo() {
        const { reply } = STATELESS
            ? await this.call(
                  'tools/call',
                  { name: 'echo', arguments: { text }, _meta: META },
                  { 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
              )
            : await this.call('tools/call', { name: 'echo', arguments: { text } });
        const content = reply.result?.content;
        const incomplete = STATELESS && (reply.result?.resultType ?? 'complete') !== 'complete';
        if (!Array.isArray(content) || content[0]?.text !== text || reply.result.isError === true || incomplete) {
            throw new BenchError(`tools/call: unexpected result ${JSON.stringify(reply.result).slice(0, 200)}`);
        }
    }

    async close() {
        try {
            if (STATELESS || SESSIONLESS) return; // no session to end
            const { body } = await this.http.request({ method: 'DELETE', path: url.pathname, headers: this.headers() });
            await body.dump();
        } finally {
            await this.http.close();
        }
    }
}

function percentile(sorted, p) {
    if (sorted.length === 0) return 0;
    const rank = Math.ceil((p / 100) * sorted.length);
    return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

async function main() {
    const sessions = Array.from({ length: clients }, () => new Session());
    await Promise.all(sessions.map((s) => s.open()));

    const now = () => Number(process.hrtime.bigint()) / 1e6; // ms
    let latencies = new Float64Array(1 << 16);
    let count = 0;
    let t0 = Infinity; // the timed window: calls that *complete* in [t0, t1) are counted
    let t1 = Infinity;
    let stopping = false;
    let cpu0;
    let cpu;
    const timed = () => new Promise((resolve) => {
        setTimeout(() => {
            t0 = now();
            cpu0 = process.cpuUsage();
            process.stdout.write('# measuring\n');
            setTimeout(() => {
                t1 = now();
                stopping = true;
                cpu = process.cpuUsage(cpu0);
                process.stdout.write('# done\n');
                resolve();
            }, duration * 1000);
        }, warmup * 1000);
    });

    async function worker(session) {
        while (!stopping) {
            const begin = now();
            await session.echo();
            const end = now();
            if (end >= t0 && end < t1) {
                if (count === latencies.length) {
                    const grown = new Float64Array(latencies.length * 2);
                    grown.set(latencies);
                    latencies = grown;
                }
                latencies[count++] = end - begin;
            }
        }
    }

    async function fixed(session) {
        for (let i = 0; i < CALLS; i++) {
            const begin = now();
            await session.echo();
            latencies[count++] = now() - begin; // CALLS * clients is at most 1 << 16
        }
    }

    if (CALLS > 0) {
        if (CALLS * clients > latencies.length) throw new BenchError('--calls: at most 65536 in all');
        t0 = now();
        cpu0 = process.cpuUsage();
        process.stdout.write('# measuring\n');
        await Promise.all(sessions.map(fixed));
        t1 = now();
        cpu = process.cpuUsage(cpu0);
        process.stdout.write('# done\n');
    } else {
        const workers = Promise.all(sessions.map(worker));
        workers.catch(fail); // a failed call ends the run at once
        await timed();
        await workers;
    }
    const wall = t1 - t0;
    const modes = new Set(sessions.flatMap((s) => [...s.modes]));
    await Promise.all(sessions.map((s) => s.close()));

    const sorted = latencies.subarray(0, count).sort();
    const seconds = wall / 1000;
    const result = {
        clients,
        requests: count,
        seconds,
        rps: count / seconds,
        p50_ms: percentile(sorted, 50),
        p99_ms: percentile(sorted, 99),
        mode: [...modes].sort().join('+'),
        errors: 0,
        cpu_pct: ((cpu.user + cpu.system) / 1000 / wall) * 100,
        protocol_version: sessions[0]?.protocolVersion ?? null,
        sessionless: SESSIONLESS,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
}

function fail(err) {
    process.stderr.write(`loadgen: ${err instanceof BenchError ? err.message : err.stack ?? err}\n`);
    process.exit(1);
}

main().catch(fail);
