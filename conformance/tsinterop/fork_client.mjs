#!/usr/bin/env node
// An ACP client built on the official TypeScript SDK's unstable v1
// entrypoint (@agentclientprotocol/sdk/unstable): the TypeScript half of the
// session/fork interop (see README.md, "The fork flow"). It spawns the agent
// command given after "--", runs the fork flow and prints ONE JSON summary
// line on stdout. Exit status: 0 without errors, 1 with errors, 2 on bad
// usage, 3 on timeout.
//
//   node fork_client.mjs -- AGENT [ARGS...]

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk/unstable";

const CLIENT_NAME = "acpkit-tsinterop-fork-client";
const TIMEOUT_MS = 15000;

const sep = process.argv.indexOf("--");
if (sep < 0 || sep === process.argv.length - 1) {
  process.stderr.write(`${CLIENT_NAME}: usage: node fork_client.mjs -- AGENT [ARGS...]\n`);
  process.exit(2);
}
const [cmd, ...args] = process.argv.slice(sep + 1);

const summary = {
  ok: false,
  errors: [],
  agent: null,
  sessionId: null,
  forkId: null,
  titles: [],
  storedTitle: null,
  unknownForkCode: null,
  agentExit: null,
};
let phase = "start";
const fail = (msg) => summary.errors.push(`${phase}: ${msg}`);

const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => {
  child.on("error", (err) => {
    fail(`agent process: ${err.message}`);
    resolve(null);
  });
  child.on("exit", (code, signal) => resolve(signal ? `signal ${signal}` : code));
});
child.stdin.on("error", () => {});

function finish(code) {
  child.kill("SIGKILL");
  summary.ok = code === 0 && summary.errors.length === 0;
  if (!summary.ok && code === 0) code = 1;
  process.stdout.write(JSON.stringify(summary) + "\n", () => {
    for (const e of summary.errors) process.stderr.write(`${CLIENT_NAME}: ${e}\n`);
    process.exit(code);
  });
}

const watchdog = setTimeout(() => {
  fail(`timed out after ${TIMEOUT_MS} ms`);
  finish(3);
}, TIMEOUT_MS);

const app = acp.client({ name: CLIENT_NAME }).onNotification(acp.methods.client.session.update, ({ params }) => {
  const u = params.update;
  if (u.sessionUpdate === "session_info_update") summary.titles.push({ sessionId: params.sessionId, title: u.title ?? null });
  else fail(`unexpected update ${u.sessionUpdate}`);
});

async function main() {
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  await app.connectWith(stream, async (ctx) => {
    phase = "initialize";
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
      clientInfo: { name: CLIENT_NAME, version: "1.0.0" },
    });
    const sc = init.agentCapabilities?.sessionCapabilities ?? {};
    summary.agent = { name: init.agentInfo?.name ?? null, fork: sc.fork != null, title: sc.title != null };
    phase = "session/new";
    const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: "/", mcpServers: [] });
    summary.sessionId = sessionId;
    phase = "session/fork";
    const fork = await ctx.request(acp.methods.agent.session.fork, { sessionId, cwd: "/", mcpServers: [] });
    summary.forkId = fork.sessionId;
    phase = "session/set_title";
    const titled = await ctx.request(acp.methods.agent.session.setTitle, { sessionId: fork.sessionId, title: "forked from the TypeScript client" });
    summary.storedTitle = titled.title ?? null;
    phase = "session/fork unknown";
    try {
      await ctx.request(acp.methods.agent.session.fork, { sessionId: "no-such-session", cwd: "/" });
      fail("forking an unknown session succeeded");
    } catch (err) {
      summary.unknownForkCode = err instanceof acp.RequestError ? err.code : String(err);
    }
  });
  phase = "stop agent";
  child.stdin.end();
  summary.agentExit = await exited;
}

main().then(
  () => {
    clearTimeout(watchdog);
    finish(0);
  },
  (err) => {
    clearTimeout(watchdog);
    fail(err instanceof acp.RequestError ? `JSON-RPC error ${err.code}: ${err.message}` : String(err?.message ?? err));
    finish(1);
  },
);
