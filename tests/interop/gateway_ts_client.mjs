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
// response header, so the test can look for upstream tokens. For "progress" it also reports
// the call's progress notifications as the server wrote them (`wire`: before the response;
// `late`: after it), and those of them the client read together with the response
// (`readWithResult`), which the SDK drops (see `progressOnTheWire`).

import { existsSync } from 'node:fs';

const SDK = new URL('../../bench/rt/peers/ts/node_modules/@modelcontextprotocol/sdk/dist/esm/', import.meta.url);
const { Client } = await import(new URL('client/index.js', SDK));
const { StdioClientTransport } = await import(new URL('client/stdio.js', SDK));
const { StreamableHTTPClientTransport } = await import(new URL('client/streamableHttp.js', SDK));
const { CreateMessageRequestSchema, ElicitRequestSchema } = await import(new URL('types.js', SDK));

const plan = JSON.parse(process.argv[2]);
const received = [];
const reads = []; // for each message received: the read it came in (see `transport.onmessage`)
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
// Every message the client receives, including the initialize answer, in the order the server
// wrote them: the SDK keeps an `onmessage` set before `connect` and calls it first for each
// message. Messages the transport hands over in one go (over stdio: one chunk read from the
// server's stdout) share a read number: no microtask runs between them.
let read = 0;
let reading = false;
transport.onmessage = (message) => {
    if (!reading) {
        read += 1;
        reading = true;
        queueMicrotask(() => { reading = false; });
    }
    received.push(message);
    reads.push(read);
};
const sdkErrors = [];
client.onerror = (error) => sdkErrors.push(String(error.message ?? error).slice(0, 200));
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

// The progress notifications of the call whose request was the first sent after `from`
// received messages: those the server wrote before its response (`wire`), after it (`late`),
// and those of `wire` the client read in the same go as the response (`readWithResult`). The
// SDK runs a notification's handler a microtask after it reads it (Protocol._onnotification)
// but settles a response at once, removing the call's progress handler (_onresponse): a
// progress notification read together with its response reaches no `onprogress` (the SDK
// reports "Received a progress notification for an unknown token" to `onerror` instead).
function progressOnTheWire(from) {
    const answer = received.findIndex((m, i) => i >= from && 'id' in m && ('result' in m || 'error' in m));
    const found = { wire: [], late: [], readWithResult: [] };
    if (answer < 0) return found;
    const token = received[answer].id; // the SDK's progress token is its request's id
    received.forEach((m, i) => {
        if (i < from || m.method !== 'notifications/progress' || m.params.progressToken !== token) return;
        const update = [m.params.progress, m.params.total];
        if (i > answer) found.late.push(update);
        else {
            found.wire.push(update);
            if (reads[i] === reads[answer]) found.readWithResult.push(update);
        }
    });
    return found;
}

const updates = [];
const progressFrom = received.length;
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

Object.assign(out.progress, progressOnTheWire(progressFrom)); // late ones have arrived by now
out.sdkErrors = sdkErrors;
out.version = received.find((message) => message.result?.protocolVersion)?.result.protocolVersion ?? null;
out.received = received;
out.headers = headers;
console.log(JSON.stringify(out));
await client.close();
