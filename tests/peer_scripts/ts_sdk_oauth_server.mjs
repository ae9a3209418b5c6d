// The MCP TypeScript SDK's OAuth example as a test peer, built from the SDK's exported pieces and bound to
// 127.0.0.1 (the example listens on all interfaces): a resource server (Streamable HTTP, tool "add") and its
// demo authorization server (dynamic registration, PKCE, approves at once), strict: tokens are bound to
// the resource and the resource server accepts only its own.
//
//   node ts_sdk_oauth_server.mjs NODE_MODULES MCP_PORT AUTH_PORT [CERT KEY]
//
// With CERT and KEY (PEM files) both serve HTTPS. The resource is http(s)://localhost:MCP_PORT/mcp, the
// issuer http(s)://ISSUER_HOST:AUTH_PORT (ISSUER_HOST from the environment, default localhost).
// Prints one JSON line {"mcp": URL, "issuer": URL} once both listen.
import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, mcpPort, authPort, certFile, keyFile] = process.argv.slice(2);
const sdk = (path) => import(pathToFileURL(join(modules, "@modelcontextprotocol", "sdk", "dist", "esm", path)).href);
const express = createRequire(join(modules, "noop.js"))("express");

const { McpServer } = await sdk("server/mcp.js");
const { StreamableHTTPServerTransport } = await sdk("server/streamableHttp.js");
const { mcpAuthRouter, mcpAuthMetadataRouter, createOAuthMetadata, getOAuthProtectedResourceMetadataUrl } =
  await sdk("server/auth/router.js");
const { requireBearerAuth } = await sdk("server/auth/middleware/bearerAuth.js");
const { resourceUrlFromServerUrl } = await sdk("shared/auth-utils.js");
const { DemoInMemoryAuthProvider } = await sdk("examples/server/demoInMemoryOAuthProvider.js");
const z = await import(pathToFileURL(join(modules, "zod", "v4", "index.js")).href).catch(() => null);

const tls = certFile ? { cert: readFileSync(certFile), key: readFileSync(keyFile) } : null;
const scheme = tls ? "https" : "http";
const mcpUrl = new URL(`${scheme}://localhost:${mcpPort}/mcp`);
const issuer = new URL(`${scheme}://${process.env.ISSUER_HOST || "localhost"}:${authPort}`);
const listen = (app, port) =>
  new Promise((resolve) => (tls ? https.createServer(tls, app) : http.createServer(app)).listen(+port, "127.0.0.1", resolve));

const provider = new DemoInMemoryAuthProvider(
  (resource) => !!resource && resource.toString() === resourceUrlFromServerUrl(mcpUrl).toString(),
);
const authApp = express();
authApp.use(express.json());
authApp.use(express.urlencoded());
authApp.use(mcpAuthRouter({ provider, issuerUrl: issuer, scopesSupported: ["mcp:tools"] }));

const app = express();
app.use(express.json());
const oauthMetadata = createOAuthMetadata({ provider, issuerUrl: issuer, scopesSupported: ["mcp:tools"] });
app.use(mcpAuthMetadataRouter({ oauthMetadata, resourceServerUrl: mcpUrl, scopesSupported: ["mcp:tools"], resourceName: "wiretap test" }));
const auth = requireBearerAuth({
  verifier: provider,
  requiredScopes: [],
  resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
  expectedResource: mcpUrl,
});

const shape = z ? { a: z.number(), b: z.number() } : undefined;
app.post("/mcp", auth, async (req, res) => {
  const server = new McpServer({ name: "wiretap-oauth-peer", version: "1.0.0" });
  server.registerTool("add", { description: "Add two numbers", inputSchema: shape }, async ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
  }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on("close", () => transport.close());
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
});
const notAllowed = (_req, res) => res.status(405).set("Allow", "POST").end();
app.get("/mcp", auth, notAllowed);
app.delete("/mcp", auth, notAllowed);

await Promise.all([listen(authApp, authPort), listen(app, mcpPort)]);
console.log(JSON.stringify({ mcp: mcpUrl.href, issuer: issuer.href }));
