// The official TypeScript SDK's client (bench/rt/peers/ts) as the downstream client of a
// gateway (or of a plain server with the same surface), for tests/interop/test_gateway_clients.py.
//
//   node gateway_ts_client.mjs PLAN_JSON
//
// PLAN: {"target": {"command", "args", "env"} | {"url"}, "calls": [[name, args], ...],
//        "progress": [name, args], "sample": [name, args], "cancel": [name, args-with-marker],
//        "approve": [name, args], "refuse": [name, args]}
// It lists every tool (following nextCursor), makes each call in order, answers sampling with
// a fixed model and text, accepts the elicitation asked during "approve" (every boolean field of
// the form set to true) and declines the one
// asked during "refuse", and aborts "cancel" once its marker file says the tool started.
// Prints one JSON line: what it saw, and every message it received (raw), plus for HTTP every
// response header, so the test can look for upstream tokens.

import { existsSync } from 'node:fs';

const SDK = new URL('../../bench/rt/peers/ts/node_modules/@modelcontextprotocol/sdk/dist/esm/', import.meta.url);
const { Client } = await import(new URL('client/index.js', SDK));
const { StdioClientTransport } = await import(new URL('client/stdio.js', SDK));
const { StreamableHTTPClientTransport } = await import(new URL('client/streamableHttp.js', SDK));
const { CreateMessageRequestSchema, ElicitRequestSchema } = await import(new URL('types.js', SDK));

const plan = JSON.parse(process.argv[2]);
const received = [];
const headers = [];
const sampling = [];
const elicitations = [];
let elicitAnswer = 'decline';

const client = new Client(
    { name: 'ts-gateway-client', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: { form: {} } } },
);
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    sampling.push(request.params.messages.map((m) => m.content.text).join(' '));
    return { role: 'assistant', model: 'ts-model', content: { type: 'text', text: 'sampled by ts' } };
});
client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicitations.push({ message: request.params.message, answer: elicitAnswer });
    if (elicitAnswer !== 'accept') return { action: elicitAnswer };
    // The approval form: every boolean field set to true.
    const fields = Object.entries(request.params.requestedSchema?.properties ?? {});
    return { action: 'accept', content: Object.fromEntries(fields.filter(([, f]) => f.type === 'boolean').map(([k]) => [k, true])) };
});

let transport;
if (plan.target.url) {
    const fetchAndRecord = async (url, init) => {
        const response = await fetch(url, init);
        headers.push(Object.fromEntries(response.headers.entries()));
        return response;
    };
    transport = new StreamableHTTPClientTransport(new URL(plan.target.url), { fetch: fetchAndRecord });
} else {
    const { command, args, env } = plan.target;
    transport = new StdioClientTransport({ command, args, env: { ...process.env, ...(env ?? {}) }, stderr: 'ignore' });
}
// Every message the client receives, including the initialize answer: the SDK keeps an
// `onmessage` set before `connect` and calls it first for each message.
transport.onmessage = (message) => received.push(message);
await client.connect(transport);

function outcome(result) {
    return { text: result.content.map((block) => block.text ?? '').join(' '), isError: result.isError === true };
}

async function call([name, args], options = {}) {
    try {
        return outcome(await client.callTool({ name, arguments: args }, undefined, { timeout: 30000, ...options }));
    } catch (error) {
        return { error: String(error.message ?? error), code: error.code ?? null };
    }
}

const out = { tools: [], calls: [] };
let cursor;
do {
    const page = await client.listTools(cursor ? { cursor } : {});
    out.tools.push(...page.tools.map((tool) => tool.name));
    cursor = page.nextCursor;
} while (cursor);

for (const step of plan.calls) out.calls.push({ name: step[0], ...(await call(step)) });

const updates = [];
out.progress = { ...(await call(plan.progress, { onprogress: (p) => updates.push([p.progress, p.total]) })), updates };
out.sample = { ...(await call(plan.sample)), requests: sampling };

const marker = plan.cancel[1].marker;
const abort = new AbortController();
const started = (async () => {
    while (!existsSync(`${marker}.started`)) await new Promise((resolve) => setTimeout(resolve, 20));
    abort.abort('the user cancelled');
})();
out.cancel = await call(plan.cancel, { signal: abort.signal });
await started;

elicitAnswer = 'accept';
out.approve = await call(plan.approve);
elicitAnswer = 'decline';
out.refuse = await call(plan.refuse);
out.elicitations = elicitations;
out.after = await call(plan.calls[0]); // the session still works after the cancel and refusal

out.version = received.find((message) => message.result?.protocolVersion)?.result.protocolVersion ?? null;
out.received = received;
out.headers = headers;
console.log(JSON.stringify(out));
await client.close();
