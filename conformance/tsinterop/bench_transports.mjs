#!/usr/bin/env node
// The TypeScript SDK's side of acpkit's network benchmarks (tools/bench,
// BenchmarkNet*): one process serves an agent with the SDK's AcpServer
// (Streamable HTTP, or WebSocket through `ws`) on 127.0.0.1 and drives it
// with the SDK's client over createHttpStream or createWebSocketStream,
// as the Go benchmark does with acpsdk/acpnet on both ends.
//
//   node bench_transports.mjs --transport http|ws --count N
//
// After initialize and session/new it prints "ready". Then each stdin
// line is a command, answered by one line with the elapsed nanoseconds:
//   "stream K"  K prompts, each answered after N session/update
//               notifications (the issue #2 payload, texts numbered);
//   "ping K"    K session/set_mode round trips;
//   "quit"      ends the process.

import http from "node:http";
import { createInterface } from "node:readline";

import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket, WebSocketServer } from "ws";

const CHUNK_TEXT = "The parser now accepts a trailing comma; I added two tests for empty input and reran the suite.";
const SESSION_ID = "sess_7f3a9c2e41b8";

function flag(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}
const transport = flag("--transport", "http");
const count = Number(flag("--count", "100000"));

const agent = acp
  .agent({ name: "acpkit-bench-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({ protocolVersion: acp.PROTOCOL_VERSION, agentCapabilities: {} }))
  .onRequest(acp.methods.agent.session.new, () => ({ sessionId: SESSION_ID }))
  .onRequest(acp.methods.agent.session.setMode, () => ({}))
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    for (let i = 0; i < count; i++) {
      await client.notify(acp.methods.client.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${i} ${CHUNK_TEXT}` } },
      });
    }
    return { stopReason: "end_turn" };
  })
  .onNotification(acp.methods.agent.session.cancel, () => {});

const server = new AcpServer({ createAgent: () => agent });
const handle = createNodeHttpHandler(server);
const sockets = new WebSocketServer({ noServer: true });
const upgrade = createNodeWebSocketUpgradeHandler(server, sockets);
const httpServer = http.createServer(handle);
httpServer.on("upgrade", upgrade);
await new Promise((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${httpServer.address().port}/acp`;

let seen = 0;
const client = acp
  .client({ name: "acpkit-bench-client" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    if (params.update.sessionUpdate === "agent_message_chunk") seen++;
  })
  .onRequest(acp.methods.client.session.requestPermission, () => ({ outcome: { outcome: "cancelled" } }));

const stream =
  transport === "http" ? createHttpStream(url) : createWebSocketStream(url.replace(/^http/, "ws"), { WebSocket });

await client.connectWith(stream, async (ctx) => {
  await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: "/", mcpServers: [] });
  process.stdout.write("ready\n");
  for await (const line of createInterface({ input: process.stdin })) {
    const [cmd, k] = line.trim().split(/\s+/);
    const rounds = Number(k);
    const start = process.hrtime.bigint();
    if (cmd === "stream") {
      for (let r = 0; r < rounds; r++) {
        seen = 0;
        await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [] });
        if (seen !== count) throw new Error(`saw ${seen} of ${count} notifications`);
      }
    } else if (cmd === "ping") {
      for (let r = 0; r < rounds; r++) {
        await ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: "code" });
      }
    } else {
      break;
    }
    process.stdout.write(`${process.hrtime.bigint() - start}\n`);
  }
});
await server.close();
sockets.close();
httpServer.closeAllConnections();
httpServer.close();
