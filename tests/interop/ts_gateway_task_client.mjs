// The official TypeScript SDK's client (bench/rt/peers/ts, its experimental task API) drives
// tasks through the gateway (`mcpbind host -c CONFIG --serve`) over stdio, for
// tests/interop/test_gateway_ts_client_tasks.py.
//
//   node ts_gateway_task_client.mjs PYTHON CONFIG
//
// Prints one JSON line: per tool, the stream's message types, the final result's text, the
// task id it was given and the related-task ids its elicitation handler saw.

const SDK = new URL('../../bench/rt/peers/ts/node_modules/@modelcontextprotocol/sdk/dist/esm/', import.meta.url);
const { Client } = await import(new URL('client/index.js', SDK));
const { StdioClientTransport } = await import(new URL('client/stdio.js', SDK));
const { ElicitRequestSchema } = await import(new URL('types.js', SDK));

const [python, config] = process.argv.slice(2);
const related = [];
const client = new Client({ name: 'ts-gateway-task-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const task = request.params._meta?.['io.modelcontextprotocol/related-task'];
    related.push(task?.taskId ?? null);
    return { action: 'accept', content: { name: task ? 'Ada' : 'no-task' } };
});
const args = ['-m', 'mcpbind.cli', 'host', '-c', config, '--serve'];
await client.connect(new StdioClientTransport({ command: python, args, env: process.env }));

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
    return { types, text, taskId, status: task?.status ?? null };
}

const out = { slow: await run('jobs__slow', { seconds: 0.3 }), ask: await run('jobs__ask', {}) };
out.related = related;
console.log(JSON.stringify(out));
await client.close();
