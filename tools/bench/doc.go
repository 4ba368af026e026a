// Package bench holds the side-by-side benchmarks behind `make bench`: the
// generated codec, the acpsdk connection and the adapter, each measured next
// to a competitor (github.com/coder/acp-go-sdk v0.13.0) and a floor (the
// least work that could do the same job), so that cmd/benchratio can print
// every comparison as a ratio against its target.
//
// The benchmarks live in the package's test files; the package itself has
// nothing to import. Names matter: cmd/benchratio finds results by them.
//
//   - BenchmarkCodec/{decode,encode}/{ours,coder,floor}: one ~200-byte
//     agent_message_chunk session/update params object (issue #2).
//   - BenchmarkRoundTrip/{acpsdk,topologyecho,rawecho}: a request round
//     trip between two connections over OS pipes; the same line through
//     SP-8's goroutine topology without JSON; and a raw line echo over the
//     same pipes, for information (issue #15).
//   - BenchmarkNotifications/{ours,coder,scandecode}: 100,000 session/update
//     notifications read, decoded to typed values and handed to a handler;
//     and as the floor, a line scan of the same OS pipe that validates and
//     decodes each line into plain structs (issue #15).
//   - BenchmarkRoundTripPaired and BenchmarkNotificationsPaired/{1cpu,2cpu}:
//     acpsdk against topologyecho, and ours against scandecode (with
//     GOMAXPROCS 1 and 2), measured paired in one benchmark each: their
//     runs alternate, and the median of each pair's ratio is reported
//     (issue #23), so that a shared machine's drift falls on both.
//   - BenchmarkFlood: 1 GiB of notifications into a slow handler, reporting
//     the peak heap, the bytes allocated per input byte and how far the
//     reader got ahead of the handler (issue #15).
//   - BenchmarkAdapter/{start,teardown}: the adapter starting and stopping
//     a session with the reference agent (issue #6); start alternates each
//     start with a bare spawn-and-exit of the same binary, its floor, and
//     reports both times and their ratio (issue #15); handshake, with no
//     target, is start done with acpsdk alone.
//   - BenchmarkNetRoundTrip/{http,ws}/{acpnet,bare,tssdk}: a request round
//     trip over Streamable HTTP and WebSocket with acpsdk/acpnet on both
//     ends, a bare echo of the same line with the same library, and the
//     TypeScript SDK's transports (issue #27).
//   - BenchmarkNetRoundTripPaired/{http,ws,ws-topology}: acpnet against
//     each bare echo, and over WebSocket against the topology echo carried
//     by coder/websocket (SP-8's goroutines, a line a message), measured
//     paired as BenchmarkRoundTripPaired is (issue #27).
//   - BenchmarkNetNotifications/{http,ws}/{acpnet,tssdk}: a prompt answered
//     after 100,000 session/update notifications, each handled by the
//     client first, over each transport (issue #27). The tssdk benchmarks
//     run conformance/tsinterop/bench_transports.mjs with that directory's
//     pinned node_modules (`make deps`).
package bench
