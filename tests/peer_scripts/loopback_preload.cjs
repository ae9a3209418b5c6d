// Loaded with NODE_OPTIONS=--require=THIS into a node server under test (tests/e2e/test_real_mcp_http.py).
//
// - Every TCP listen() goes to 127.0.0.1, whatever host (or none) the server asked for: the
//   reference servers listen on all interfaces, and tests must only ever bind loopback.
// - Once listening, the bound address is appended to $WIRETAP_PRELOAD_LISTEN as one JSON line.
// - Every HTTP request the server receives, and every chunk it writes back, is appended to
//   $WIRETAP_PRELOAD_LOG as JSON lines: {n, part: "request", method, url, headers, remotePort},
//   {n, part: "head", status, headers} at the first write, {n, part: "write", data}, and
//   {n, part: "end"}. Request bodies are not read here: that would race the server's own parser.
"use strict";

const fs = require("fs");
const http = require("http");
const net = require("net");

const LOOPBACK = "127.0.0.1";
const listenFile = process.env.WIRETAP_PRELOAD_LISTEN;
const logFile = process.env.WIRETAP_PRELOAD_LOG;

function append(file, entry) {
  if (file) fs.appendFileSync(file, JSON.stringify(entry) + "\n");
}

function isPort(value) {
  return typeof value === "number" || (typeof value === "string" && /^\d+$/.test(value));
}

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first !== null && typeof first === "object" && !Array.isArray(first)) {
    if (first.path === undefined && first.handle === undefined && first._handle === undefined) {
      args[0] = { ...first, host: LOOPBACK };
    }
  } else if (args.length === 0 || isPort(first) || typeof first === "function") {
    const rest = isPort(first) ? args.slice(1) : args;
    if (typeof rest[0] === "string") rest.shift(); // the host the server asked for
    args = [isPort(first) ? Number(first) : 0, LOOPBACK, ...rest];
  }
  this.once("listening", () => {
    const address = this.address();
    if (address && typeof address === "object") append(listenFile, address);
  });
  return listen.apply(this, args);
};

let requests = 0;
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, req, res) {
  if (event === "request" && logFile) {
    const n = ++requests;
    const headers = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i], req.rawHeaders[i + 1]]);
    append(logFile, { n, part: "request", method: req.method, url: req.url, headers, remotePort: req.socket.remotePort });
    let headLogged = false;
    const logChunk = (chunk) => {
      if (!headLogged) {
        headLogged = true;
        append(logFile, { n, part: "head", status: res.statusCode, headers: res.getHeaders() });
      }
      if (chunk !== undefined && chunk !== null && typeof chunk !== "function") {
        append(logFile, { n, part: "write", data: Buffer.isBuffer(chunk) ? chunk.toString("utf8") : String(chunk) });
      }
    };
    const write = res.write;
    res.write = function (chunk, ...rest) {
      logChunk(chunk);
      return write.call(this, chunk, ...rest);
    };
    const end = res.end;
    res.end = function (chunk, ...rest) {
      logChunk(chunk);
      append(logFile, { n, part: "end" });
      return end.call(this, chunk, ...rest);
    };
  }
  return emit.apply(this, arguments);
};
