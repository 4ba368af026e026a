// Package acpnet carries ACP over the network: Streamable HTTP and
// WebSocket on one endpoint, and raw TCP, interoperating with the
// official TypeScript SDK's transports (@agentclientprotocol/sdk 2.4.0,
// whose observed behaviour decides what ACP's transport RFD leaves open).
//
// A transport only moves messages. Each side is still an acpsdk.Conn (or
// a client or agent side built on one) reading and writing
// newline-delimited JSON, exactly as over a subprocess's pipes, so
// ordering (SDK-7), cancellation (SDK-8) and every bound and backpressure
// guarantee (SDK-9) are the Conn's, unchanged.
//
// # Serving an agent
//
// [NewHandler] returns an http.Handler for the ACP endpoint. It answers
// POST (one JSON-RPC message; initialize opens a connection), GET (an
// event stream, or an upgrade to WebSocket) and DELETE (the end of a
// connection), and starts one agent per connection with an [AgentFunc]:
//
//	h := acpnet.NewHandler(func(stream io.ReadWriteCloser, _ acpnet.Peer) *acpsdk.Conn {
//		return acpsdk.NewAgentSide(stream, stream, &myAgent{}, nil).Conn()
//	}, nil)
//	http.Handle("/acp", h)
//
// [TCPServer] serves the same AgentFunc over raw TCP sockets.
//
// # Dialing an agent
//
// [Dial] returns a stream to pass to acpsdk.NewClientSide as both its
// reader and its writer, as a subprocess's stdout and stdin would be:
//
//	stream, err := acpnet.Dial(ctx, "http://127.0.0.1:8080/acp", nil)
//	client := acpsdk.NewClientSide(stream, stream, myClient, nil)
//
// The URL's scheme picks the transport: http or https ([HTTPStream]), ws
// or wss ([WebSocketStream]), tcp ([DialTCP]).
//
// # Routing over HTTP
//
// The agent's messages reach the client on event streams: a request or a
// notification whose params carry a sessionId on that session's stream,
// anything else on the connection's; an answer where the request it
// answers was routed (session/new's and session/load's on the
// connection's, session/fork's on the source session's). A stream nobody
// reads holds its messages, within MaxBufferedBytes (TR-7). The client
// opens a session's stream before its first message to that session, and
// sends Acp-Session-Id with every message that carries a sessionId and
// with answers to requests that arrived on a session's stream (TR-4).
//
// # Bounds
//
// Every bound fails the peer that broke it in a documented way and keeps
// memory bounded (TR-18):
//
//	POST body over MaxMessageBytes (16 MiB)            413
//	id or session id over MaxIDLength (1,024)          400 (HTTP), close 1008 (WebSocket)
//	bodies waiting for the agent over MaxBufferedBytes 503
//	output no client reads, over MaxBufferedBytes      the agent's writes wait
//	  (64 MiB) for MaxOutputStall (60 s)               the connection is closed
//	a WebSocket write waiting MaxOutputStall           the socket is closed
//	WebSocket message over MaxMessageBytes             close 1008
//	over MaxUnreadSessionStreams (1,024)               the connection is closed
//	over MaxConnections (1,024)                        503 (initialize, upgrade)
//
// Over TCP the socket is the agent's stream, so the Conn's own bounds
// (line length, queued messages and bytes) apply as on stdio.
//
// # Security
//
// The defaults suit a server on loopback (TR-17): a request carrying an
// Origin outside ServerOptions.AllowedOrigins is refused 403, so no web
// page can drive the agent; AllowedHosts defeats DNS rebinding;
// ServerOptions.Authorize runs before any connection is looked up.
// Connection ids are random but are not credentials, and no log record
// holds a header's value.
package acpnet
