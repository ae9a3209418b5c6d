// The MCP TypeScript SDK's own Client as a test peer (tests/e2e/test_ts_sdk_client.py).
//
//   node ts_sdk_client.mjs NODE_MODULES [--tool NAME] stdio COMMAND [ARGS...]
//   node ts_sdk_client.mjs NODE_MODULES http URL
//   node ts_sdk_client.mjs NODE_MODULES sse URL
//
// NODE_MODULES is the npm folder holding @modelcontextprotocol/sdk (tests/support/peers.py::ts_sdk): ESM
// resolution ignores NODE_PATH, so the SDK is imported by path. It connects with
// StdioClientTransport, StreamableHTTPClientTransport or SSEClientTransport (legacy HTTP+SSE,
// 2024-11-05: GET URL for the endpoint event, POSTs there, answers on the stream), lists the tools,
// calls add (or --tool NAME) with a=2, b=40, prints {"tools": ..., "call": ...} as one JSON line, closes and exits 0.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, ...rest] = process.argv.slice(2);
const tool = rest[0] === "--tool" ? rest.splice(0, 2)[1] : "add";
const [transportName, ...target] = rest;
const sdk = (path) => import(pathToFileURL(join(modules, "@modelcontextprotocol", "sdk", "dist", "esm", path)).href);

const { Client } = await sdk("client/index.js");
let transport;
if (transportName === "stdio") {
  const { StdioClientTransport } = await sdk("client/stdio.js");
  transport = new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: "inherit" });
} else if (transportName === "http") {
  const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(target[0]));
} else if (transportName === "sse") {
  const { SSEClientTransport } = await sdk("client/sse.js");
  transport = new SSEClientTransport(new URL(target[0]));
} else {
  console.error(`ts_sdk_client: unknown transport ${transportName}`);
  process.exit(2);
}

const client = new Client({ name: "wiretap-ts-sdk-peer", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
const call = await client.callTool({ name: tool, arguments: { a: 2, b: 40 } });
console.log(JSON.stringify({ tools, call }));
await client.close();
process.exit(0);
