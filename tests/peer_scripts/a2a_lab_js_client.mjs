// The real @a2a-js/sdk 1.3.0 client against `wiretap lab serve --a2a`, for tests/e2e/test_lab_a2a_real.py.
//
//   node a2a_lab_js_client.mjs URL      (NODE_PATH: the SDK's node_modules)
//
// For each of the card's bindings (JSON-RPC, then HTTP+JSON) it sends, with returnImmediately, `slow 1`
// and polls it with getTask every 0.2 s until it completes (each poll's call and return kept on
// process.hrtime, the monotonic clock wiretap stamps with), then `reject out of scope` and
// `failing-artifact`. It prints one JSON object: per binding, the transport the SDK chose, each task as
// the SDK parsed it (its TaskState by name) and the polls.
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { hrtime } from "node:process";

const require = createRequire(process.env.NODE_PATH + "/");
const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } = require("@a2a-js/sdk/client");
const { Role, TaskState, taskStateToJSON } = require("@a2a-js/sdk");

const BINDINGS = { jsonrpc: "JSONRPC", rest: "HTTP+JSON" };
const TERMINAL = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_REJECTED, TaskState.TASK_STATE_CANCELED]);
const monotonic = () => Number(hrtime.bigint()) / 1e9;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function request(text) {
  const message = { messageId: randomUUID(), contextId: "", taskId: "", role: Role.ROLE_USER, parts: [{ content: { $case: "text", value: text }, metadata: undefined }], metadata: undefined, extensions: [], referenceTaskIds: [] };
  return { message, configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, historyLength: undefined, returnImmediately: true }, metadata: undefined, tenant: "" };
}

function shown(task) {
  return { id: task.id, state: taskStateToJSON(task.status.state), message: task.status.message?.parts?.map((p) => p.content?.value) ?? [], artifacts: (task.artifacts ?? []).map((a) => ({ name: a.name, data: a.parts?.[0]?.content?.value })) };
}

async function runBinding(url, binding) {
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory(), new RestTransportFactory()],
    preferredTransports: [BINDINGS[binding]],
  });
  const client = await new ClientFactory(options).createFromUrl(url);
  const send = async (text) => {
    const result = await client.sendMessage(request(text));
    return result.payload?.value ?? result;
  };
  let task = await send("slow 1");
  const polls = [];
  while (!TERMINAL.has(task.status.state)) {
    await sleep(200);
    const sent = monotonic();
    task = await client.getTask({ id: task.id, historyLength: undefined, tenant: "" });
    polls.push([sent, monotonic()]);
  }
  return { transport: client.transport?.protocolName ?? BINDINGS[binding], slow: { task: shown(task), polls }, reject: shown(await send("reject out of scope")), "failing-artifact": shown(await send("failing-artifact")) };
}

const url = process.argv[2];
const out = {};
for (const binding of Object.keys(BINDINGS)) out[binding] = await runBinding(url, binding);
console.log(JSON.stringify(out));
