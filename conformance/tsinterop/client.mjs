#!/usr/bin/env node
// An ACP client built on the official TypeScript SDK
// (@agentclientprotocol/sdk). It spawns the agent command given after "--",
// or connects to an agent served at --url over the SDK's Streamable HTTP
// (createHttpStream) or WebSocket (createWebSocketStream) transport, runs
// one fixed flow against it (see README.md) and prints ONE JSON summary
// line on stdout for a Go test to assert on. Exit status: 0 when the flow ran
// without errors, 1 when it ran with errors (listed in the summary and on
// stderr), 2 on bad usage, 3 on timeout.
//
//   node client.mjs [--timeout-ms N] -- AGENT [ARGS...]
//   node client.mjs [--timeout-ms N] --url URL --transport http|ws
//
// Both agent processes (the flow's and the fresh one for session/load) get
// ACP_INTEROP_STORE pointing at a temporary directory this client owns, so an
// agent that persists sessions there can replay them to a new process.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";

const CLIENT_NAME = "acpkit-tsinterop-client";

// The flow's prompts. Agents key their behaviour on the words "permission"
// and "slow"; the first prompt contains neither.
const PROMPTS = {
  plain: "hello from the TypeScript client",
  permission: "please ask for permission first",
  slow: "take it slow until cancelled",
};

function usage(msg) {
  process.stderr.write(
    `${CLIENT_NAME}: ${msg}\nusage: node client.mjs [--timeout-ms N] -- AGENT [ARGS...]\n` +
      `       node client.mjs [--timeout-ms N] --url URL --transport http|ws\n`,
  );
  process.exit(2);
}

function parseArgs(argv) {
  const sep = argv.indexOf("--");
  const opts = { timeoutMs: 15000, agent: sep < 0 ? [] : argv.slice(sep + 1), url: null, transport: null };
  const flags = sep < 0 ? argv : argv.slice(0, sep);
  for (let i = 0; i < flags.length; i++) {
    if (flags[i] === "--timeout-ms" && i + 1 < flags.length) {
      opts.timeoutMs = Number(flags[++i]);
      if (!Number.isInteger(opts.timeoutMs) || opts.timeoutMs <= 0) usage(`bad --timeout-ms ${flags[i]}`);
    } else if (flags[i] === "--url" && i + 1 < flags.length) {
      opts.url = flags[++i];
    } else if (flags[i] === "--transport" && i + 1 < flags.length) {
      opts.transport = flags[++i];
      if (opts.transport !== "http" && opts.transport !== "ws") usage(`bad --transport ${opts.transport}`);
    } else {
      usage(`unknown flag ${flags[i]}`);
    }
  }
  if (opts.url) {
    if (opts.agent.length > 0) usage("give either --url or an agent command, not both");
    if (!opts.transport) usage("--url needs --transport http|ws");
  } else if (opts.agent.length === 0) {
    usage("missing agent command after --");
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const storeDir = mkdtempSync(join(tmpdir(), "acp-interop-"));
const children = new Set();

const summary = {
  ok: false,
  errors: [],
  agent: null,
  sessionId: null,
  turns: [],
  updates: {},
  stopReasons: [],
  permission: { requests: 0, options: [], selected: null },
  replay: null,
  outOfTurn: {},
  agentExits: [],
};
let phase = "start";

function fail(msg) {
  summary.errors.push(`${phase}: ${msg}`);
}

function count(obj, key) {
  obj[key] = (obj[key] ?? 0) + 1;
}

// finish prints the summary line and exits; it is the only exit path after
// argument parsing, so every run prints exactly one line.
function finish(code) {
  for (const child of children) child.kill("SIGKILL");
  rmSync(storeDir, { recursive: true, force: true });
  summary.ok = code === 0 && summary.errors.length === 0;
  if (!summary.ok && code === 0) code = 1;
  process.stdout.write(JSON.stringify(summary) + "\n", () => {
    for (const e of summary.errors) process.stderr.write(`${CLIENT_NAME}: ${e}\n`);
    process.exit(code);
  });
}

const watchdog = setTimeout(() => {
  fail(`timed out after ${opts.timeoutMs} ms`);
  finish(3);
}, opts.timeoutMs);

// spawnAgent starts one agent process and returns its ACP stream and a
// promise of its exit status. With --url it connects to the served agent
// instead: a fresh transport connection, whose end (the connection's
// close, a DELETE over HTTP) stands for the process's.
function spawnAgent() {
  if (opts.url) {
    const stream =
      opts.transport === "http"
        ? createHttpStream(opts.url)
        : createWebSocketStream(opts.url.replace(/^http/, "ws"), { WebSocket });
    return { child: null, stream, exited: null };
  }
  const [cmd, ...args] = opts.agent;
  const child = spawn(cmd, args, {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, ACP_INTEROP_STORE: storeDir },
  });
  children.add(child);
  const exited = new Promise((resolve) => {
    child.on("error", (err) => {
      fail(`agent process: ${err.message}`);
      children.delete(child);
      resolve({ code: null, signal: null, error: err.message });
    });
    child.on("exit", (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  // The agent may exit before reading everything we wrote; that shows up
  // as a failed request, not as an unhandled EPIPE.
  child.stdin.on("error", () => {});
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  return { child, stream, exited };
}

// stopAgent closes the agent's stdin (end of the connection) and waits for it
// to exit on its own; an agent that lingers is killed and reported.
async function stopAgent(agent) {
  if (!agent.child) return; // connectWith closed the transport
  agent.child.stdin.end();
  let timer;
  const grace = new Promise((resolve) => {
    timer = setTimeout(resolve, 5000, "linger");
  });
  let status = await Promise.race([agent.exited, grace]);
  clearTimeout(timer);
  if (status === "linger") {
    fail("agent did not exit within 5 s of stdin closing");
    agent.child.kill("SIGKILL");
    status = await agent.exited;
  }
  summary.agentExits.push(status.signal ? `signal ${status.signal}` : status.code);
}

// The collector receives session/update notifications for the current step.
// Between steps, updates are legal (agents send some outside turns) but are
// counted apart, so the summary shows them.
function outOfTurn(params) {
  count(summary.outOfTurn, params.update.sessionUpdate);
}
let collect = outOfTurn;

// Sessions the client has sent session/cancel for: a permission request
// for them is answered "cancelled", as the protocol asks of clients.
const cancelledSessions = new Set();

function newApp() {
  return acp
    .client({ name: CLIENT_NAME })
    .onNotification(acp.methods.client.session.update, (cx) => {
      // Synchronous on purpose: the SDK starts handlers in arrival order, so
      // recording without awaiting keeps the order of the wire.
      collect(cx.params, cx.agent);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      summary.permission.requests++;
      summary.permission.options = params.options.map((o) => ({ optionId: o.optionId, kind: o.kind }));
      if (cancelledSessions.has(params.sessionId)) {
        return { outcome: { outcome: "cancelled" } };
      }
      if (phase !== "prompt permission") fail(`unexpected session/request_permission during ${phase}`);
      const reject = params.options.find((o) => o.kind === "reject_once");
      if (!reject) {
        fail("permission request offers no reject_once option");
        return { outcome: { outcome: "cancelled" } };
      }
      summary.permission.selected = reject.optionId;
      return { outcome: { outcome: "selected", optionId: reject.optionId } };
    });
}

async function initialize(ctx) {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
    clientInfo: { name: CLIENT_NAME, version: "1.0.0" },
  });
  if (init.protocolVersion !== acp.PROTOCOL_VERSION) {
    throw new Error(`agent answered protocolVersion ${init.protocolVersion}, want ${acp.PROTOCOL_VERSION}`);
  }
  return init;
}

async function promptTurn(ctx, sessionId, name) {
  phase = `prompt ${name}`;
  const turn = {
    name,
    stopReason: null,
    updates: {},
    text: "",
    toolStatuses: [],
  };
  let cancelSent = false;
  // The cancel's own delivery: over HTTP its POST may still be in flight
  // when the turn's answer arrives on an event stream, and closing the
  // transport then would abort it, so the turn ends only once it is sent.
  let cancelDelivered = Promise.resolve();
  collect = (params, agentCx) => {
    if (params.sessionId !== sessionId) fail(`update for session ${params.sessionId}`);
    const u = params.update;
    count(turn.updates, u.sessionUpdate);
    count(summary.updates, u.sessionUpdate);
    if (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text") turn.text += u.content.text;
    if (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") turn.toolStatuses.push(u.status ?? null);
    // The slow turn's first update shows the agent is inside the turn, so a
    // cancel sent now cannot overtake the prompt.
    if (name === "slow" && !cancelSent) {
      cancelSent = true;
      cancelledSessions.add(sessionId);
      cancelDelivered = agentCx
        .notify(acp.methods.agent.session.cancel, { sessionId })
        .catch((err) => fail(`session/cancel: ${err.message}`));
    }
  };
  const res = await ctx.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: PROMPTS[name] }],
  });
  await cancelDelivered;
  cancelledSessions.delete(sessionId);
  turn.stopReason = res.stopReason;
  summary.stopReasons.push(res.stopReason);
  summary.turns.push(turn);
  if (name === "slow") {
    if (!cancelSent) fail("agent sent no update during the slow turn, so the client never cancelled");
    if (res.stopReason !== "cancelled") fail(`stopReason ${res.stopReason} after session/cancel, want cancelled`);
  }
}

async function main() {
  const first = spawnAgent();
  const loadSession = await newApp().connectWith(first.stream, async (ctx) => {
    phase = "initialize";
    const init = await initialize(ctx);
    summary.agent = {
      name: init.agentInfo?.name ?? null,
      protocolVersion: init.protocolVersion,
      loadSession: init.agentCapabilities?.loadSession === true,
    };
    phase = "session/new";
    const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: storeDir, mcpServers: [] });
    summary.sessionId = sessionId;
    await promptTurn(ctx, sessionId, "plain");
    await promptTurn(ctx, sessionId, "permission");
    await promptTurn(ctx, sessionId, "slow");
    collect = outOfTurn;
    return summary.agent.loadSession;
  });
  phase = "stop first agent";
  await stopAgent(first);

  if (!loadSession) return;

  const second = spawnAgent();
  await newApp().connectWith(second.stream, async (ctx) => {
    phase = "reload initialize";
    await initialize(ctx);
    phase = "session/load";
    const replay = { updates: {}, chunks: 0, transcript: [] };
    collect = (params) => {
      if (params.sessionId !== summary.sessionId) fail(`replayed update for session ${params.sessionId}`);
      const u = params.update;
      count(replay.updates, u.sessionUpdate);
      if (u.sessionUpdate === "user_message_chunk" || u.sessionUpdate === "agent_message_chunk") {
        replay.chunks++;
        const role = u.sessionUpdate === "user_message_chunk" ? "user" : "agent";
        replay.transcript.push({ role, text: u.content.type === "text" ? u.content.text : `[${u.content.type}]` });
      }
    };
    await ctx.request(acp.methods.agent.session.load, { sessionId: summary.sessionId, cwd: storeDir, mcpServers: [] });
    collect = outOfTurn;
    summary.replay = replay;
  });
  phase = "stop second agent";
  await stopAgent(second);
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
