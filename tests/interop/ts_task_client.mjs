// The official TypeScript SDK's client (bench/rt/peers/ts, its experimental task API) drives an
// mcpbind task tool over stdio, for tests/interop/test_ts_client_tasks.py.
//
//   node ts_task_client.mjs PYTHON TASK_APP
//
// Prints one JSON line: per tool, the stream's message types and the final result's text.

const SDK = new URL('../../bench/rt/peers/ts/node_modules/@modelcontextprotocol/sdk/dist/esm/', import.meta.url);
const { Client } = await import(new URL('client/index.js', SDK));
const { StdioClientTransport } = await import(new URL('client/stdio.js', SDK));
const { ElicitRequestSchema } = await import(new URL('types.js', SDK));

const [python, app] = process.argv.slice(2);
const client = new Client({ name: 'ts-task-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (request) => ({
    action: 'accept',
    content: { name: request.params._meta?.['io.modelcontextprotocol/related-task'] ? 'Ada' : 'no-task' },
}));
await client.connect(new StdioClientTransport({ command: python, args: [app, 'stdio'] }));

async function run(name, args) {
    const types = [];
    let text = null;
    let taskId = null;
    const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, undefined, { task: { ttl: 60000 } });
    for await (const message of stream) {
        types.push(message.type);
        if (message.type === 'taskCreated') taskId = message.task.taskId;
        if (message.type === 'result') text = message.result.content[0].text;
        if (message.type === 'error') text = `error: ${message.error.message}`;
    }
    const task = taskId ? await client.experimental.tasks.getTask(taskId) : null;
    return { types, text, status: task?.status ?? null };
}

const out = { slow: await run('slow', { seconds: 0.3 }), ask: await run('ask', {}) };
console.log(JSON.stringify(out));
await client.close();
