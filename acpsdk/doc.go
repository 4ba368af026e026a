// Package acpsdk is the runtime of the Agent Client Protocol SDK: a JSON-RPC
// 2.0 connection over newline-delimited JSON ([Conn]), and the typed client
// and agent sides built on the generated wire types in acpsdk/gen.
//
// # Typed sides
//
// [ClientSide] is for programs that drive an agent: it dispatches the
// agent's calls to a gen.Client implementation (session/update and
// session/request_permission are required; fs, terminal and elicitation
// are optional interfaces such as gen.ReadTextFileHandler, answered -32601
// when absent) and exposes the typed calls to the agent as
// [ClientSide.Agent]. [AgentSide] is the mirror for writing agents: a
// gen.Agent implementation (initialize, session/new, session/prompt,
// session/cancel, plus optional handlers such as gen.LoadSessionHandler)
// and the typed calls to the client as [AgentSide.Client]. A schema bump
// that adds a method adds an optional interface, so existing
// implementations keep compiling. Extension methods (names starting with
// "_") go out through Call, Go and Notify and come in through an optional
// [ExtensionHandler]. Params that do not decode are answered -32602 with the
// failing JSON path in the error's data ({"path": "params.sessionId"}).
//
// With SideOptions.Strict a side refuses, without sending it, a call the
// peer did not advertise (protocol.md §4): for example session/load when
// the agent's initialize response lacks loadSession, an image prompt
// without promptCapabilities.image, fs/read_text_file when the client's
// initialize request lacks fs.readTextFile. The refusal is a
// [*CapabilityError] matching [ErrNotAdvertised].
//
// # Surfaces
//
// The sides are generic over the generated surface they speak:
// [ClientSide] and [AgentSide] are [ClientSideOf] and [AgentSideOf]
// instantiated for stable v1 (package gen), and [NewClientSideOf],
// [NewAgentSideOf] and [StartAgentOf] take any generated package's Surface
// (gen.Surface, or an opt-in package's such as
// acpkit.dev/acpsdk/gen/v1unstable) with that package's Client or Agent
// implementation, passed as that interface. Strict mode then uses that
// surface's table: on v1 unstable, session/fork needs
// sessionCapabilities.fork.
//
// SideOptions.Middleware sees every inbound request and notification, with
// its raw id and params, before the typed dispatch: it may answer itself
// (a json.RawMessage result goes out byte for byte, an [*Error] keeps its
// code) or pass the request on. The reference agent builds its deliberate
// misbehaviours this way.
//
// # Concurrency model
//
// A [Conn] runs three goroutines, and everything it reads is one sequence:
//
//   - The reader splits the inbound stream into lines (at most
//     Options.MaxLineBytes each; a longer line is skipped and reported to
//     Observer.OversizeLine) and turns each line into one item of the
//     sequence: a notification, a request, a response, a line that is not
//     a message (answered at once, SDK-10), an oversize line. What cannot
//     wait for the items ahead happens as the line is read: a request
//     enters the table $/cancel_request looks in, a response leaves the
//     table of our calls. Notifications are queued without waking the
//     dispatcher; the reader wakes it once before it waits for anything
//     (the next read of the stream, room in the queue, an observer), so
//     one read's lines cost one wake-up, not one each.
//   - The dispatcher gives the items, in read order, to the connection's
//     one consumer, then the end. With a [Handler] ([NewConn]) the consumer
//     runs each notification's handler itself, one at a time, so
//     notifications are handled in read order; starts each request's
//     handler on a goroutine of its own, so a request that waits (for a
//     person, for another call) never holds up the items behind it; and
//     completes the call a response answers. With an [OrderedFunc]
//     ([NewOrderedConn]) the consumer is that function: it gets every item
//     (requests with a [Reply]) and decides on each knowing what came
//     before it. An item that finds the dispatcher waiting on an empty
//     queue, and whose taking never blocks (a request to start, a response
//     to hand over), is taken by the reader itself: nothing read before it
//     is still to be taken, so the order is the same, and a hand-off that
//     would buy nothing is saved. A request goroutine whose handler has
//     answered waits for the next request (a few do).
//   - The writer is the only goroutine that writes. Every outgoing message
//     is queued for it (Options.WriteQueue); senders wait for queue space
//     under their context. [Conn.Flush] waits until everything queued
//     before it has been written.
//
// Ordering (SDK-7) is that sequence's order: a response completes its call
// when it is taken, after every notification read before it was handled.
// So when [Conn.Call] for session/prompt returns, the handler has seen
// every session/update the agent sent before answering, and the end of the
// stream reaches waiting calls the same way.
//
// Backpressure (SDK-9): the sequence is bounded (Options.MaxQueuedMessages
// and MaxQueuedBytes, counting requests still being handled, and
// MaxBacklogBytes, the bytes still waiting for the dispatcher). When it is
// full the reader stops reading, so a slow consumer slows the peer down; no
// message is dropped and the connection is not closed for it.
//
// Handlers calling the peer: a handler (or the OrderedFunc) may call
// [Conn.Call], [Conn.Go], [Conn.Notify] or any typed peer method. Pass it
// the ctx it was given (or a context derived from it): the connection
// recognises such calls and, while one is outstanding, lifts the bound so
// the reader can reach the answer. A call made from inside the running
// notification handler or OrderedFunc is answered as soon as its response
// is read, ahead of the items queued behind the consumer, which could not
// be taken before it returns anyway (the response still takes its place in
// the sequence for an OrderedFunc). A handler that calls the peer with an
// unrelated context can deadlock when the queue is full or when a
// notification handler waits on it; this is the one rule users must follow.
//
// The ordered consumer: [NewOrderedConn]'s function receives every item,
// in read order, on the dispatcher goroutine: notifications; requests,
// each with a [Reply] the consumer uses once, now or later from any
// goroutine (the request keeps its share of the bound until then); answers
// to our calls, as items whose call completes only after the consumer took
// them; lines that are not messages; oversize lines; and, last, the end. A
// consumer whose decisions depend on order (was this request read before
// or after that answer?) takes them all from one place, and [Conn.Mark]
// puts a point in the sequence after every line already received, so the
// consumer can start something (a turn) exactly there.
//
// Cancellation (SDK-8): when the context of [Conn.Call] ends, the call
// sends $/cancel_request and returns the context's error. [Conn.Go]
// returns a [PendingCall] that is never abandoned: it completes with the
// peer's answer or when the connection ends, and [PendingCall.Cancel]
// sends $/cancel_request while the call goes on waiting for the peer's
// final answer (a result, or -32800). An inbound $/cancel_request cancels the context of the handler of
// that request; the request is still answered, with -32800 when the
// handler returns the context's error.
//
// Bad input (SDK-10): a line that is not JSON (RFC 8259, so UTF-8) is
// answered with -32700 and "id": null; JSON that is not a message (an
// array, an object with neither method nor id, an id that is not a number,
// string or null) with -32600, and so is a request whose id is one of a
// request still in flight; a request the handler does not implement with
// -32601. An object with an id and no method is a response, never
// answered: without result or error it gives its call a null result, and
// "error": null beside a result is no error. A response whose id matches
// no call is dropped and reported. A method the schema makes a
// notification (session/update) is one even when it carries "id": null:
// handled, never answered. None of them stops the connection.
//
// One validator (the generated decoders') checks each line in one walk,
// and the typed decoders then trust it: they decode the line without
// validating it again. Each member of a message may nest up to the
// decoders' depth bound, counted from the member's value, so whatever the
// connection accepts the decoders accept and re-encode. Params nested
// deeper, or holding a string that is not UTF-8 (and JSON otherwise), are
// refused as the decoders would refuse them: a request is answered -32602
// under its own id, a notification is reported; a result or error like
// that fails its call with [ErrMalformedResponse]; any other member like
// that makes the line -32700.
//
// Lines are read straight into shared 64 KiB blocks that are never written
// again, so the typed sides decode strings without copying them: a decoded
// string shares its line's block and keeps it alive. A handler that keeps
// a few small strings from many messages for long can strings.Clone them.
// [Request.DecodeParams] gives an ordered consumer or a raw handler the
// same decoding: params into their generated type, straight from the
// validated line.
//
// Handlers must not call [Conn.Close] (or a side's Close) themselves:
// Close waits for running handlers, so a handler would wait on itself;
// start it on a new goroutine instead. Handlers should return when their
// ctx is cancelled, which Close and $/cancel_request do.
//
// Ends: the connection ends when [Conn.Close] is called or the inbound
// stream ends. After a stream end, new calls fail at once; messages already
// read are still dispatched; then calls still waiting fail with an error
// matching [ErrClosed] (wrapping the read error, e.g. io.EOF), [Conn.Done]
// is closed and [Conn.Err] says why, so the end, like an answer, reaches
// callers after the notifications that preceded it. Close fails every call
// at once. A failed write fails its call with an error matching
// [ErrWriteFailed] but leaves the reader running, because answers to
// earlier calls may still arrive.
package acpsdk
