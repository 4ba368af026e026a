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
//   - BenchmarkRoundTrip/{acpsdk,echo}: a request round trip between two
//     connections over OS pipes, and a raw line echo over the same pipes
//     (issue #3).
//   - BenchmarkNotifications/{ours,coder,floor}: 100,000 session/update
//     notifications read, decoded to typed values and handed to a handler,
//     and a bare line scan of the same bytes (issue #3); scandecode, with
//     no target, scans and decodes each line into plain structs.
//   - BenchmarkFlood: 1 GiB of notifications into a slow handler, reporting
//     the peak heap (issue #3).
//   - BenchmarkAdapter/{start,teardown,spawn}: the adapter starting and
//     stopping a session with the reference agent, and a bare spawn-and-exit
//     of the same binary (issue #6); handshake, with no target, is start
//     done with acpsdk alone.
package bench
