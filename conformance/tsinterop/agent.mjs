#!/usr/bin/env node
// A deterministic ACP agent built on the official TypeScript SDK
// (@agentclientprotocol/sdk), speaking NDJSON over stdio. acpkit's Go tests
// drive it with the Go client (acpsdk.ClientSide) and with client.mjs; the
// behaviour is the contract described in README.md, mirrored by goagent/.
//
// Sessions are kept in memory. When ACP_INTEROP_STORE names a directory, each
// session's conversation is also written there, so a later agent process can
// answer session/load for it (a fresh connection is a fresh process on stdio).

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

import * as acp from "@agentclientprotocol/sdk";

const AGENT_NAME = "acpkit-tsinterop-agent";
const AGENT_VERSION = "1.0.0";

// Option ids offered by every permission request.
const ALLOW_ID = "allow-once";
const REJECT_ID = "reject-once";

const store = process.env.ACP_INTEROP_STORE || "";

// sessionId -> { history: [{ role: "user"|"agent", text }], turn: Turn | null }
const sessions = new Map();
let nextSession = 1;

function log(msg, fields = {}) {
  // stderr only: stdout carries protocol messages.
  process.stderr.write(`${AGENT_NAME}: ${msg} ${JSON.stringify(fields)}\n`);
}

function sessionFile(id) {
  return join(store, `${encodeURIComponent(id)}.json`);
}

// newSessionId picks the next unused id; with a store, an exclusive create
// claims it, so agent processes sharing the store never hand out one id twice.
function newSessionId() {
  for (;;) {
    const id = `sess-${nextSession++}`;
    if (sessions.has(id)) continue;
    if (!store) return id;
    try {
      writeFileSync(sessionFile(id), JSON.stringify({ history: [] }), { flag: "wx" });
      return id;
    } catch (err) {
      if (err.code !== "EEXIST") throw err;
    }
  }
}

function persist(id, session) {
  if (store) writeFileSync(sessionFile(id), JSON.stringify({ history: session.history }));
}

// lookup returns the session, reading it from the store when this process has
// not seen it; unknown ids are the protocol's resource-not-found error.
function lookup(id) {
  let session = sessions.get(id);
  if (session) return session;
  if (store) {
    try {
      const saved = JSON.parse(readFileSync(sessionFile(id), "utf8"));
      session = { history: saved.history ?? [], turn: null };
      sessions.set(id, session);
      return session;
    } catch (err) {
      if (err.code !== "ENOENT") throw err;
    }
  }
  throw acp.RequestError.sessionNotFound(id);
}

function promptText(blocks) {
  return blocks
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("");
}

// A Turn is one session/prompt in progress; cancel() is called by
// session/cancel or by $/cancel_request for the prompt request.
class Turn {
  constructor() {
    this.cancelled = false;
    this.whenCancelled = new Promise((resolve) => {
      this.cancel = () => {
        this.cancelled = true;
        resolve();
      };
    });
  }
}

// app is exported for serve_agent.mjs, which serves it over HTTP and
// WebSocket; run as a program, this file serves it over stdio.
export const app = acp
  .agent({ name: AGENT_NAME })
  .onRequest(acp.methods.agent.initialize, ({ params }) => {
    log("initialize", { protocolVersion: params.protocolVersion });
    return {
      // v1 is the only version this agent speaks; it answers with it whatever
      // the client asked for, and the client decides whether to go on.
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: { loadSession: true },
      agentInfo: { name: AGENT_NAME, version: AGENT_VERSION },
      authMethods: [],
    };
  })
  .onRequest(acp.methods.agent.session.new, () => {
    const sessionId = newSessionId();
    sessions.set(sessionId, { history: [], turn: null });
    log("session/new", { sessionId });
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
    const { sessionId } = params;
    const session = lookup(sessionId);
    log("session/load", { sessionId, entries: session.history.length });
    for (const entry of session.history) {
      await client.notify(acp.methods.client.session.update, {
        sessionId,
        update: {
          sessionUpdate: entry.role === "user" ? "user_message_chunk" : "agent_message_chunk",
          content: { type: "text", text: entry.text },
        },
      });
    }
    return {};
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client, signal }) => {
    const { sessionId } = params;
    const session = lookup(sessionId);
    if (session.turn) {
      throw acp.RequestError.invalidRequest(undefined, `session ${sessionId} already has a prompt turn running`);
    }
    const turn = new Turn();
    session.turn = turn;
    signal.addEventListener("abort", () => turn.cancel(), { once: true });
    try {
      return await runTurn(client, sessionId, session, turn, promptText(params.prompt));
    } finally {
      session.turn = null;
      persist(sessionId, session);
    }
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    const turn = sessions.get(params.sessionId)?.turn;
    log("session/cancel", { sessionId: params.sessionId, active: Boolean(turn) });
    // A cancel with no turn running has nothing to stop.
    turn?.cancel();
  });

async function runTurn(client, sessionId, session, turn, text) {
  session.history.push({ role: "user", text });
  const turnNo = session.history.filter((e) => e.role === "user").length;
  const update = (u) => client.notify(acp.methods.client.session.update, { sessionId, update: u });
  const say = async (chunk) => {
    session.history.push({ role: "agent", text: chunk });
    await update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: chunk } });
  };

  if (text.includes("slow")) {
    // One chunk tells the client the turn is running; then nothing happens
    // until the client cancels.
    await say("working slowly; waiting for session/cancel");
    await turn.whenCancelled;
    return { stopReason: "cancelled" };
  }

  await say(`turn ${turnNo}: `);
  await say(text);
  await say(" [done]");

  const toolCallId = `call-${turnNo}`;
  await update({
    sessionUpdate: "tool_call",
    toolCallId,
    title: "Echo the prompt",
    kind: "other",
    status: "pending",
  });

  let status = "completed";
  if (text.includes("permission")) {
    const answer = await client.request(acp.methods.client.session.requestPermission, {
      sessionId,
      toolCall: { toolCallId, title: "Echo the prompt", kind: "other", status: "pending" },
      options: [
        { optionId: ALLOW_ID, name: "Allow once", kind: "allow_once" },
        { optionId: REJECT_ID, name: "Reject once", kind: "reject_once" },
      ],
    });
    const outcome = answer.outcome;
    const chosen = outcome.outcome === "selected" ? outcome.optionId : "cancelled";
    await say(`permission: ${chosen}`);
    if (chosen !== ALLOW_ID) status = "failed";
  }

  await update({
    sessionUpdate: "tool_call_update",
    toolCallId,
    status,
    content: [{ type: "content", content: { type: "text", text: status === "completed" ? text : "not run" } }],
  });
  return { stopReason: turn.cancelled ? "cancelled" : "end_turn" };
}

if (store) mkdirSync(store, { recursive: true });

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
  const connection = app.connect(stream);
  connection.closed.then(
    () => log("connection closed"),
    (err) => {
      log("connection failed", { error: String(err) });
      process.exitCode = 1;
    },
  );
}
