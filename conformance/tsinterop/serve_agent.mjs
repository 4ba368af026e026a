#!/usr/bin/env node
// Serves agent.mjs's agent over the network with the official TypeScript
// SDK's server transport (@agentclientprotocol/sdk/experimental/server,
// AcpServer, wired to node:http by experimental/node): Streamable HTTP and
// WebSocket (through the `ws` package) on one endpoint, one agent
// connection per client connection. acpkit's Go client and its status
// table run against it.
//
//   node serve_agent.mjs
//
// It listens on an ephemeral port of 127.0.0.1 and prints one line,
// "listening on http://127.0.0.1:PORT/acp", then serves until its stdin
// closes (or SIGTERM). /broken serves an agent that fails to start, so
// initialize there is answered 500.

import http from "node:http";

import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";
import { WebSocketServer } from "ws";

import { app } from "./agent.mjs";

const server = new AcpServer({ createAgent: () => app });
const broken = new AcpServer({
  createAgent: () => ({
    connect() {
      throw new Error("this agent always fails to start");
    },
  }),
});
const routes = { "/acp": createNodeHttpHandler(server), "/broken": createNodeHttpHandler(broken) };
const sockets = new WebSocketServer({ noServer: true });
const upgrade = createNodeWebSocketUpgradeHandler(server, sockets);

const httpServer = http.createServer((req, res) => {
  const route = routes[new URL(req.url, "http://localhost").pathname];
  if (route) {
    route(req, res);
    return;
  }
  res.statusCode = 404;
  res.end("not found");
});
httpServer.on("upgrade", (req, socket, head) => {
  if (new URL(req.url, "http://localhost").pathname === "/acp") {
    upgrade(req, socket, head);
    return;
  }
  socket.destroy();
});

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await Promise.allSettled([server.close(), broken.close()]);
  sockets.close();
  httpServer.closeAllConnections();
  httpServer.close(() => process.exit(0));
}
process.stdin.on("end", stop);
process.stdin.resume();
process.on("SIGTERM", stop);

httpServer.listen(0, "127.0.0.1", () => {
  process.stdout.write(`listening on http://127.0.0.1:${httpServer.address().port}/acp\n`);
});
