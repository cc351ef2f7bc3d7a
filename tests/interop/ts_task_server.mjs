// An official TypeScript SDK server (bench/rt/peers/ts, its experimental task API) that asks
// its client for sampling as a task, for tests/interop/test_ts_server_client_tasks.py.
//
//   node ts_task_server.mjs        (stdio)
//
// Tool `delegate {prompt}`: createMessageStream with `task`; answers, as JSON text, the
// stream's message types and the sampled text.

const SDK = new URL('../../bench/rt/peers/ts/node_modules/@modelcontextprotocol/sdk/dist/esm/', import.meta.url);
const { Server } = await import(new URL('server/index.js', SDK));
const { StdioServerTransport } = await import(new URL('server/stdio.js', SDK));
const { CallToolRequestSchema, ListToolsRequestSchema } = await import(new URL('types.js', SDK));

const server = new Server({ name: 'ts-task-server', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: 'delegate', inputSchema: { type: 'object', properties: { prompt: { type: 'string' } } } }],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const types = [];
    let text = null;
    const params = {
        messages: [{ role: 'user', content: { type: 'text', text: request.params.arguments.prompt } }],
        maxTokens: 64,
    };
    const stream = server.experimental.tasks.createMessageStream(params, { task: { ttl: 60000 } });
    for await (const message of stream) {
        types.push(message.type);
        if (message.type === 'result') text = message.result.content.text;
        if (message.type === 'error') text = `error: ${message.error.message}`;
    }
    return { content: [{ type: 'text', text: JSON.stringify({ types, text }) }] };
});
await server.connect(new StdioServerTransport());
