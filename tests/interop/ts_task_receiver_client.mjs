// The official TypeScript SDK's client (bench/rt/peers/ts) as a task receiver: it declares
// tasks for sampling, creates a task in its own InMemoryTaskStore when the server asks for
// one, and answers the server's tasks/get and tasks/result from it. For
// tests/interop/test_ts_server_client_tasks.py.
//
//   node ts_task_receiver_client.mjs PYTHON TASK_APP
//
// Calls task_app's `delegate` tool (an mcpbind server: ctx.sample(..., task=True)) and prints
// one JSON line: the tool's text and how many sampling tasks the client created.

const SDK = new URL('../../bench/rt/peers/ts/node_modules/@modelcontextprotocol/sdk/dist/esm/', import.meta.url);
const { Client } = await import(new URL('client/index.js', SDK));
const { StdioClientTransport } = await import(new URL('client/stdio.js', SDK));
const { CreateMessageRequestSchema } = await import(new URL('types.js', SDK));
const { InMemoryTaskStore } = await import(new URL('experimental/tasks/index.js', SDK));

const [python, app] = process.argv.slice(2);
const capabilities = {
    sampling: {},
    tasks: { list: {}, cancel: {}, requests: { sampling: { createMessage: {} } } },
};
const client = new Client({ name: 'ts-task-receiver', version: '1.0.0' }, { capabilities, taskStore: new InMemoryTaskStore() });
let created = 0;
client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
    const prompt = request.params.messages[0].content.text;
    const result = { model: 'ts', role: 'assistant', content: { type: 'text', text: `ts: ${prompt}` } };
    if (!request.params.task || !extra.taskStore) return result;
    created += 1;
    const task = await extra.taskStore.createTask({ ttl: request.params.task.ttl });
    setTimeout(() => extra.taskStore.storeTaskResult(task.taskId, 'completed', result), 200);
    return { task };
});
await client.connect(new StdioClientTransport({ command: python, args: [app, 'stdio'] }));
const answer = await client.callTool({ name: 'delegate', arguments: { prompt: 'from mcpbind' } });
console.log(JSON.stringify({ text: answer.content[0].text, isError: answer.isError ?? false, created }));
await client.close();
