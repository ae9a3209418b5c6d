// An MCP client on the TypeScript SDK that logs in with OAuth (discovery, dynamic registration, PKCE,
// resource indicator) and calls a tool, for tests/e2e/test_forward_oauth.py.
//
//   node ts_sdk_oauth_client.mjs NODE_MODULES URL
//
// Nobody is at a browser: redirectToAuthorization fetches the authorization URL itself and takes the code
// from the authorization server's 302. fetch takes the proxy from the environment on Node 24 with
// NODE_USE_ENV_PROXY=1, and the CA from NODE_EXTRA_CA_CERTS. Prints {"call": result, "secrets": [code, verifier, client secret, token]} as one JSON line,
// or {"error": text} and exits 1.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, url] = process.argv.slice(2);
const sdk = (path) => import(pathToFileURL(join(modules, "@modelcontextprotocol", "sdk", "dist", "esm", path)).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { UnauthorizedError } = await sdk("client/auth.js");

const callback = "http://localhost:8766/callback";
let code = null;
const provider = {
  get redirectUrl() {
    return callback;
  },
  get clientMetadata() {
    return {
      client_name: "wiretap-oauth-peer",
      redirect_uris: [callback],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_post",
      scope: "mcp:tools",
    };
  },
  clientInformation() {
    return this._client;
  },
  saveClientInformation(info) {
    this._client = info;
  },
  tokens() {
    return this._tokens;
  },
  saveTokens(tokens) {
    this._tokens = tokens;
  },
  async redirectToAuthorization(authorizationUrl) {
    const response = await fetch(authorizationUrl, { redirect: "manual" });
    code = new URL(response.headers.get("location")).searchParams.get("code");
  },
  saveCodeVerifier(verifier) {
    this._verifier = verifier;
  },
  codeVerifier() {
    return this._verifier;
  },
};

try {
  const client = new Client({ name: "wiretap-ts-oauth-peer", version: "1.0.0" });
  let transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  try {
    await client.connect(transport);
  } catch (error) {
    if (!(error instanceof UnauthorizedError) || code === null) throw error;
    await transport.finishAuth(code);
    transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    await client.connect(transport);
  }
  const call = await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
  const secrets = [code, provider._verifier, provider._client?.client_secret, provider._tokens?.access_token];
  console.log(JSON.stringify({ call, secrets: secrets.filter(Boolean) }));
  await client.close();
} catch (error) {
  console.log(JSON.stringify({ error: String(error?.stack ?? error) }));
  process.exit(1);
}
