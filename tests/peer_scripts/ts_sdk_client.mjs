// The MCP TypeScript SDK's own Client as a test peer (tests/test_ts_sdk_client.py).
//
//   node ts_sdk_client.mjs NODE_MODULES stdio COMMAND [ARGS...]
//   node ts_sdk_client.mjs NODE_MODULES http URL
//
// NODE_MODULES is the npm folder holding @modelcontextprotocol/sdk (tests/peers.py::ts_sdk): ESM
// resolution ignores NODE_PATH, so the SDK is imported by path. It connects with
// StdioClientTransport or StreamableHTTPClientTransport, lists the tools, calls add(a=2, b=40),
// prints {"tools": ..., "call": ...} as one JSON line, closes and exits 0.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, transportName, ...target] = process.argv.slice(2);
const sdk = (path) => import(pathToFileURL(join(modules, "@modelcontextprotocol", "sdk", "dist", "esm", path)).href);

const { Client } = await sdk("client/index.js");
let transport;
if (transportName === "stdio") {
  const { StdioClientTransport } = await sdk("client/stdio.js");
  transport = new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: "inherit" });
} else if (transportName === "http") {
  const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(target[0]));
} else {
  console.error(`ts_sdk_client: unknown transport ${transportName}`);
  process.exit(2);
}

const client = new Client({ name: "wiretap-ts-sdk-peer", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
const call = await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
console.log(JSON.stringify({ tools, call }));
await client.close();
process.exit(0);
