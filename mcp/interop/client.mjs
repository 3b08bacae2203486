// An MCP client on the official TypeScript SDK, driven line by line, for
// package mcp's interoperability test (interop_test.go):
//
//   node client.mjs http URL [NAME: VALUE]...   Streamable HTTP, with these headers
//   node client.mjs stdio COMMAND [ARG]...      a command it starts, over its stdin and stdout
//
// Each line of stdin is one step, a JSON object {"op": ..., ...}; each
// step's answer is one line of stdout, {"result": ...} or {"error":
// {"name", "code", "message"}}. The steps:
//
//   connect        initialize: the protocol version agreed, the server's
//                  name and capabilities, whether a session id came
//   listPrompts    prompts/list
//   getPrompt      prompts/get of name with arguments
//   listTools      tools/list (the client then checks each tool's answers
//                  against its output schema)
//   callTool       tools/call of name with arguments
//   listChanged    waits (30 s at most) for a notifications/prompts/list_changed
//                  not yet waited for, and answers how many came
//   close          ends the session (DELETE over HTTP) and the client, and
//                  answers the transport's errors seen since connect
//
// stdio's command inherits this process's environment.
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { PromptListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [mode, target, ...rest] = process.argv.slice(2);
let transport;
let protocolVersion; // stdio: told by the client, as it tells an HTTP transport
if (mode === 'http' && target) {
  const headers = {};
  for (const h of rest) {
    const i = h.indexOf(':');
    if (i < 1) fail(`not a header NAME: VALUE: ${h}`);
    headers[h.slice(0, i).trim()] = h.slice(i + 1).trim();
  }
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
} else if (mode === 'stdio' && target) {
  transport = new StdioClientTransport({ command: target, args: rest, env: { ...process.env }, stderr: 'inherit' });
  transport.setProtocolVersion = (v) => { protocolVersion = v; };
} else {
  fail('usage: node client.mjs http URL [NAME: VALUE]... | node client.mjs stdio COMMAND [ARG]...');
}

const transportErrors = [];
const client = new Client({ name: 'prompts-interop', version: '1.0.0' });
client.onerror = (err) => transportErrors.push(describe(err));

let changed = 0; // list_changed notifications received
let waited = 0; // of which a listChanged step has answered
let wake = () => {};
client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
  changed++;
  wake();
});

const steps = {
  async connect() {
    await client.connect(transport);
    return {
      protocolVersion: transport.protocolVersion ?? protocolVersion,
      sessionId: transport.sessionId !== undefined,
      serverInfo: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
    };
  },
  listPrompts: () => client.listPrompts(),
  getPrompt: (s) => client.getPrompt({ name: s.name, arguments: s.arguments }),
  listTools: () => client.listTools(),
  callTool: (s) => client.callTool({ name: s.name, arguments: s.arguments }),
  async listChanged() {
    const deadline = Date.now() + 30_000;
    while (changed === waited) {
      if (Date.now() > deadline) throw new Error('no notifications/prompts/list_changed within 30 s');
      await new Promise((resolve) => {
        wake = resolve;
        setTimeout(resolve, 1000);
      });
    }
    waited = changed;
    return { count: changed };
  },
  async close() {
    if (transport.terminateSession) await transport.terminateSession();
    await client.close();
    return { transportErrors };
  },
};

// Steps run one at a time, in order, each answered before the next is read.
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
for (let next = await lines.next(); !next.done; next = await lines.next()) {
  let answer;
  try {
    const step = JSON.parse(next.value);
    const run = steps[step.op];
    if (!run) throw new Error(`no step ${JSON.stringify(step.op)}`);
    answer = { result: (await run(step)) ?? {} };
  } catch (err) {
    answer = { error: describe(err) };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
}
await client.close();
process.exit(0);

// describe is an error as the Go test reads it: an McpError's code is
// JSON-RPC's, a StreamableHTTPError's the HTTP status.
function describe(err) {
  return { name: err?.constructor?.name ?? typeof err, code: err?.code, message: String(err?.message ?? err) };
}

function fail(message) {
  process.stderr.write(message + '\n');
  process.exit(2);
}
