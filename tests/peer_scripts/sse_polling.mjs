// The MCP TypeScript SDK's own SEP-1699 example pair, unmodified, as test peers (tests/e2e/test_sse_polling_example.py).
//
//   node sse_polling.mjs NODE_MODULES server      the example server, on a free loopback port: prints its URL first
//   node sse_polling.mjs NODE_MODULES client URL  the example client, talking to URL
//
// Both examples hard-code http://localhost:3001/mcp. The server's listen() is sent to 127.0.0.1 and a
// free port (tests must only bind loopback, and may run side by side); the client's fetch() of the
// hard-coded address is sent to URL instead. Everything else (headers, bodies, reconnection) is theirs.
import net from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const HARD_CODED = "http://localhost:3001/mcp";
const [modules, role, target] = process.argv.slice(2);
const example = (path) =>
  pathToFileURL(join(modules, "@modelcontextprotocol", "sdk", "dist", "esm", "examples", path)).href;

if (role === "server") {
  const listen = net.Server.prototype.listen;
  net.Server.prototype.listen = function (port, ...rest) {
    const callback = rest.find((arg) => typeof arg === "function");
    this.once("listening", () => console.log(`http://127.0.0.1:${this.address().port}/mcp`));
    return listen.call(this, 0, "127.0.0.1", ...(callback ? [callback] : []));
  };
  await import(example("server/ssePollingExample.js"));
} else if (role === "client") {
  const fetch = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    const moved = url.startsWith(HARD_CODED) ? target + url.slice(HARD_CODED.length) : url;
    return fetch(input instanceof Request ? new Request(moved, input) : moved, init);
  };
  await import(example("client/ssePollingClient.js"));
} else {
  console.error(`sse_polling: unknown role ${role}`);
  process.exit(2);
}
