// Package suite is the conformance suite of acpkit: tests only, run by
// `go test ./conformance/...`. They pin the handshake version (the version
// our clients send, the SDK's constant and the pinned schema's agree) and
// drive the reference agent with acpsdk's client side over real processes
// and pipes, one requirement per test (test names cite the SDK-… IDs of
// the protocol specification). The TypeScript SDK interop lives in
// conformance/tsinterop.
package suite
