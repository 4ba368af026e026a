#!/usr/bin/env node
// A deterministic ACP agent built on the official TypeScript SDK's unstable
// v1 entrypoint (@agentclientprotocol/sdk/unstable), speaking NDJSON over
// stdio: the TypeScript half of the session/fork interop (see README.md,
// "The fork flow"); goforkagent/ is its Go twin.
//
// It advertises sessionCapabilities.fork and .title. session/fork and
// session/set_title on an unknown session get -32002; a successful
// set_title is announced with a session_info_update before it is answered.

import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk/unstable";

const AGENT_NAME = "acpkit-tsinterop-fork-agent";

// sessionId -> { forkedFrom: string | null, title: string | null }
const sessions = new Map();
let nextSession = 1;

function lookup(id) {
  const session = sessions.get(id);
  if (!session) throw acp.RequestError.sessionNotFound(id);
  return session;
}

function newSession(forkedFrom) {
  const sessionId = `sess-${nextSession++}`;
  sessions.set(sessionId, { forkedFrom, title: null });
  return sessionId;
}

const app = acp
  .agent({ name: AGENT_NAME })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { sessionCapabilities: { fork: {}, title: {} } },
    agentInfo: { name: AGENT_NAME, version: "1.0.0" },
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, () => ({ sessionId: newSession(null) }))
  .onRequest(acp.methods.agent.session.fork, ({ params }) => {
    lookup(params.sessionId);
    return { sessionId: newSession(params.sessionId) };
  })
  .onRequest(acp.methods.agent.session.setTitle, async ({ params, client }) => {
    const session = lookup(params.sessionId);
    session.title = params.title;
    await client.notify(acp.methods.client.session.update, {
      sessionId: params.sessionId,
      update: { sessionUpdate: "session_info_update", title: params.title },
    });
    // The response carries the title as stored (SetSessionTitleResponse).
    return { title: params.title };
  })
  .onRequest(acp.methods.agent.session.prompt, ({ params }) => {
    lookup(params.sessionId);
    return { stopReason: "end_turn" };
  })
  .onNotification(acp.methods.agent.session.cancel, () => {});

const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const connection = app.connect(stream);
connection.closed.then(
  () => {},
  (err) => {
    process.stderr.write(`${AGENT_NAME}: connection failed ${String(err)}\n`);
    process.exitCode = 1;
  },
);
