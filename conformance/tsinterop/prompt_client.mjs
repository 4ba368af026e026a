#!/usr/bin/env node
// A minimal ACP client on the official TypeScript SDK
// (@agentclientprotocol/sdk), written the way its README shows an
// application does it: client({ name }), handlers with onRequest and
// onNotification, the workflow in connectWith. acpcheck grades it as "the
// TypeScript SDK's client" (conformance/realclients).
//
//   node prompt_client.mjs [--prompt TEXT] -- AGENT [ARGS...]
//
// It spawns the agent, runs initialize (no fs, no terminal), session/new
// in its own directory and one prompt, and prints the agent's text and
// the stop reason. A permission request gets the first refusing option
// (else cancelled), or cancelled once the turn is cancelled. SIGINT
// cancels the turn with session/cancel; the prompt's answer is still
// awaited. At the end it closes the agent's stdin and waits for it to exit
// (killing it after 5 s). Exit status: 0 after the turn ended, 1 on an
// error, 2 on bad usage.

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

const NAME = "acpkit-tsinterop-prompt-client";

function usage(msg) {
  process.stderr.write(`${NAME}: ${msg}\nusage: node prompt_client.mjs [--prompt TEXT] -- AGENT [ARGS...]\n`);
  process.exit(2);
}

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
if (sep < 0 || sep === argv.length - 1) usage("missing agent command after --");
let promptText = "hello";
const flags = argv.slice(0, sep);
for (let i = 0; i < flags.length; i++) {
  if (flags[i] === "--prompt" && i + 1 < flags.length) promptText = flags[++i];
  else usage(`unknown flag ${flags[i]}`);
}
const [cmd, ...cmdArgs] = argv.slice(sep + 1);

const child = spawn(cmd, cmdArgs, { stdio: ["pipe", "pipe", "inherit"] });
child.stdin.on("error", () => {}); // an agent that exits early: the request fails instead
const exited = new Promise((resolve) => {
  child.on("error", (err) => resolve({ code: null, error: err.message }));
  child.on("exit", (code, signal) => resolve({ code, signal }));
});

let sessionId = null;
let cancelled = false;

const app = acp
  .client({ name: NAME })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    if (params.sessionId !== sessionId) return;
    const u = params.update;
    if (u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text") {
      process.stdout.write(`agent: ${u.content.text}\n`);
    }
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    if (cancelled) return { outcome: { outcome: "cancelled" } };
    const refuse =
      params.options.find((o) => o.kind === "reject_once") ?? params.options.find((o) => o.kind === "reject_always");
    return refuse ? { outcome: { outcome: "selected", optionId: refuse.optionId } } : { outcome: { outcome: "cancelled" } };
  });

let code = 0;
try {
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
      clientInfo: { name: NAME, version: "1.0.0" },
    });
    if (init.protocolVersion !== acp.PROTOCOL_VERSION) {
      throw new Error(`the agent answered protocol version ${init.protocolVersion}, this client speaks ${acp.PROTOCOL_VERSION}`);
    }
    const session = await ctx.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
    sessionId = session.sessionId;
    process.once("SIGINT", () => {
      cancelled = true;
      ctx.notify(acp.methods.agent.session.cancel, { sessionId }).catch((err) => {
        process.stderr.write(`${NAME}: session/cancel: ${err.message}\n`);
      });
    });
    const res = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: promptText }],
    });
    process.stdout.write(`stop: ${res.stopReason}\n`);
  });
} catch (err) {
  process.stderr.write(`${NAME}: ${err instanceof acp.RequestError ? `JSON-RPC error ${err.code}: ${err.message}` : (err?.message ?? err)}\n`);
  code = 1;
}

child.stdin.end();
let timer;
const status = await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 5000, null)))]);
clearTimeout(timer);
if (status === null) {
  process.stderr.write(`${NAME}: the agent did not exit within 5 s of its stdin closing; killing it\n`);
  child.kill("SIGKILL");
  await exited;
}
process.exit(code);
