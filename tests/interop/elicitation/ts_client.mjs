// The official TypeScript SDK's client, with an elicitation handler, against an mcpbind server
// over stdio: `node ts_client.mjs SDK_DIR -- SERVER_CMD...`. Prints one JSON line with the
// tool's text (which names the negotiated version) and the questions asked.
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const sdk = process.argv[2];
const serverCmd = process.argv.slice(process.argv.indexOf('--') + 1);
const load = (p) => import(pathToFileURL(join(sdk, 'dist/esm', p)).href);
const { Client } = await load('client/index.js');
const { StdioClientTransport, getDefaultEnvironment } = await load('client/stdio.js');
const { ElicitRequestSchema } = await load('types.js');

const client = new Client({ name: 'ts-elicitation', version: '1.0.0' }, { capabilities: { elicitation: {} } });
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: { name: 'Ada' } };
});
const transport = new StdioClientTransport({
    command: serverCmd[0],
    args: serverCmd.slice(1),
    env: { ...getDefaultEnvironment(), PYTHONPATH: process.env.PYTHONPATH ?? '' },
});
await client.connect(transport);
const result = await client.callTool({ name: 'ask_name', arguments: {} });
console.log(JSON.stringify({
    text: result.content[0].text,
    isError: result.isError ?? false,
    asked,
}));
await client.close();
