// The official TypeScript SDK's client runs a whole 2025-11-25 session against a cluster
// behind a balancer, for tests/cluster/test_sdk_clients.py:
//
//   node ts_session_client.mjs SDK_DIR URL
//
// Prints one JSON line: what each step answered, and every HTTP request the transport sent,
// in order, with the worker that answered it (the last x-test-worker value).

const [sdkDir, url] = process.argv.slice(2);
const SDK = new URL(`file://${sdkDir}/dist/esm/`);
const { Client } = await import(new URL('client/index.js', SDK));
const { StreamableHTTPClientTransport } = await import(new URL('client/streamableHttp.js', SDK));
const types = await import(new URL('types.js', SDK));

const sent = [];
const out = { asked: [], progress: [] };
async function tagged(input, init) {
    const entry = [init?.method ?? 'GET', ''];
    sent.push(entry);
    const response = await fetch(input, init);
    const workers = (response.headers.get('x-test-worker') ?? '').split(',');
    entry[1] = workers[workers.length - 1].trim();
    if (entry[0] === 'DELETE') out.deleted = response.status;
    return response;
}

const client = new Client(
    { name: 'ts-cluster-client', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {} } },
);
client.setRequestHandler(types.CreateMessageRequestSchema, async (request) => {
    out.asked.push(request.params.messages[0].content.text);
    return { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'test-model' };
});
client.setRequestHandler(types.ElicitRequestSchema, async (request) => {
    out.asked.push(request.params.message);
    return { action: 'accept', content: { name: 'Ada' } };
});
let updated;
const gotUpdate = new Promise((resolve) => { updated = resolve; });
client.setNotificationHandler(types.ResourceUpdatedNotificationSchema, async (note) => {
    updated(note.params.uri);
});

const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: tagged });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (result) => result.content[0].text;

await client.connect(transport);
out.version = transport.protocolVersion;
await sleep(500); // the transport opens its GET stream after notifications/initialized
out.add = text(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } }));
out.count = text(await client.callTool({ name: 'count', arguments: { to: 5 } }, undefined, {
    onprogress: (p) => out.progress.push(p.progress),
}));
out.capital = text(await client.callTool({ name: 'capital', arguments: {} }));
out.greet = text(await client.callTool({ name: 'greet', arguments: {} }));

// Cancellation: abort after the first progress; the SDK sends notifications/cancelled.
const abort = new AbortController();
try {
    await client.callTool({ name: 'count', arguments: { to: 200 } }, undefined, {
        signal: abort.signal,
        onprogress: () => abort.abort('changed my mind'),
    });
    out.aborted = false;
} catch {
    out.aborted = true;
}
// The cancel travels to the session's owner through another worker: ask until it has landed.
for (let waited = 0; ; waited += 100) {
    out.cancelled = (await client.callTool({ name: 'cancellations', arguments: {} })).structuredContent;
    if (out.cancelled.result.length > 0 || waited >= 10000) break;
    await sleep(100);
}

await client.subscribeResource({ uri: 'mem://note' });
await client.callTool({ name: 'touch', arguments: { uri: 'mem://note' } });
out.updated = await Promise.race([gotUpdate, sleep(10000).then(() => null)]);

await transport.terminateSession(); // DELETE
await client.close();
out.sent = sent;
console.log(JSON.stringify(out));
