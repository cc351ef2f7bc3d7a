// Round-trip bench client on the official TypeScript SDK, for mcpbind's `make bench-rt`.
//
//   node bench_client.mjs --transport stdio|memory [--seq N] [--conc M] [--inflight K]
//                         [--warmup W] [--text T] [--flavor mcpserver|lowlevel] [-- SERVER_CMD...]
//
// Same command line and the same single JSON output line as the Python clients
// (bench/rt/harness.py):
//   --transport stdio   spawns SERVER_CMD with the SDK's StdioClientTransport
//   --transport memory  links a Client to an in-process echo server (echo_server.mjs, flavour
//                       --flavor) with the SDK's InMemoryTransport.createLinkedPair()
// After `initialize` (Client.connect), it times `tools/call echo` round trips: --warmup
// untimed calls in each mode, then --seq sequential calls, then --conc calls with --inflight
// workers each keeping one call outstanding. Percentiles are nearest-rank.

import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createEchoServer } from './echo_server.mjs';

function sdkVersion() {
    try {
        const url = new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url);
        return JSON.parse(readFileSync(url, 'utf8')).version;
    } catch {
        return undefined;
    }
}

const DEFAULT_TEXT = 'hello from the mcpbind round-trip benchmark';

function parseArgs(argv) {
    const opts = {
        transport: 'stdio',
        seq: 2000,
        conc: 10000,
        inflight: 32,
        warmup: 500,
        text: DEFAULT_TEXT,
        flavor: 'mcpserver',
        serverCmd: [],
    };
    const ints = new Set(['seq', 'conc', 'inflight', 'warmup']);
    for (let i = 0; i < argv.length; i++) {
        const arg = argv[i];
        if (arg === '--') {
            opts.serverCmd = argv.slice(i + 1);
            break;
        }
        const m = /^--([a-z]+)(?:=(.*))?$/.exec(arg);
        if (!m || !(m[1] in opts) || m[1] === 'serverCmd') throw new Error(`unknown argument ${arg}`);
        const value = m[2] ?? argv[++i];
        opts[m[1]] = ints.has(m[1]) ? Number.parseInt(value, 10) : value;
    }
    if (!['stdio', 'memory'].includes(opts.transport)) throw new Error(`bad --transport ${opts.transport}`);
    if (opts.transport === 'stdio' && opts.serverCmd.length === 0) {
        throw new Error('stdio transport needs a server command after --');
    }
    return opts;
}

function percentile(sorted, q) {
    const rank = Math.max(1, Math.ceil((q / 100) * sorted.length));
    return sorted[rank - 1];
}

const round = (x, digits) => Number(x.toFixed(digits));

function summarize(latenciesMs, seconds, inflight) {
    const sorted = Float64Array.from(latenciesMs).sort();
    return {
        calls: sorted.length,
        inflight,
        seconds: round(seconds, 6),
        calls_per_s: round(sorted.length / seconds, 1),
        p50_ms: round(percentile(sorted, 50), 4),
        p99_ms: round(percentile(sorted, 99), 4),
    };
}

function makeEcho(client) {
    return async (text) => {
        const result = await client.callTool({ name: 'echo', arguments: { text } });
        const block = result.content?.[0];
        if (result.isError || block?.type !== 'text') {
            throw new Error(`unexpected echo result ${JSON.stringify(result)}`);
        }
        return block.text;
    };
}

async function runSequential(echo, calls, text) {
    const latencies = [];
    const start = performance.now();
    for (let i = 0; i < calls; i++) {
        const t0 = performance.now();
        const got = await echo(text);
        latencies.push(performance.now() - t0);
        if (got !== text) throw new Error(`echo mismatch: ${got}`);
    }
    return summarize(latencies, (performance.now() - start) / 1000, 1);
}

async function runConcurrent(echo, calls, inflight, text) {
    const latencies = [];
    let remaining = calls;
    const worker = async () => {
        while (remaining > 0) {
            remaining--;
            const t0 = performance.now();
            const got = await echo(text);
            latencies.push(performance.now() - t0);
            if (got !== text) throw new Error(`echo mismatch: ${got}`);
        }
    };
    const start = performance.now();
    await Promise.all(Array.from({ length: Math.min(inflight, calls) }, worker));
    return summarize(latencies, (performance.now() - start) / 1000, inflight);
}

async function connect(opts) {
    const client = new Client({ name: 'ts-bench-client', version: '1.0.0' });
    if (opts.transport === 'memory') {
        const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
        const server = createEchoServer(opts.flavor);
        await server.connect(serverTransport);
        await client.connect(clientTransport);
        return { client, close: async () => { await client.close(); await server.close(); } };
    }
    const [command, ...args] = opts.serverCmd;
    const transport = new StdioClientTransport({
        command,
        args,
        env: getDefaultEnvironment(),
        stderr: 'inherit',
    });
    await client.connect(transport);
    return { client, close: () => client.close() };
}

async function main() {
    const opts = parseArgs(process.argv.slice(2));
    const { client, close } = await connect(opts);
    const echo = makeEcho(client);
    if (opts.warmup > 0) {
        await runSequential(echo, opts.warmup, opts.text);
        await runConcurrent(echo, opts.warmup, opts.inflight, opts.text);
    }
    const sequential = await runSequential(echo, opts.seq, opts.text);
    const concurrent = await runConcurrent(echo, opts.conc, opts.inflight, opts.text);
    await close();
    const sdk = sdkVersion();
    const detail = `@modelcontextprotocol/sdk ${sdk ?? '?'} Client` +
        (opts.transport === 'memory' ? `, server=${opts.flavor}` : '') + `, node ${process.version}`;
    process.stdout.write(
        JSON.stringify({ impl: 'ts-sdk', transport: opts.transport, detail, sequential, concurrent }) + '\n',
    );
}

main().then(
    () => process.exit(0),
    (err) => {
        console.error(err);
        process.exit(1);
    },
);
