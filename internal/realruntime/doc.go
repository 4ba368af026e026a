// Package realruntime runs the real agent runtimes pinned in
// conformance/runtimes (claude-agent-acp, codex-acp) offline for tests:
// HOME in a temporary directory with the runtime's settings written there,
// the model API pointed at a fakemodel.Server, and every proxy variable
// pointed at that server too (it refuses to forward), with loopback
// exempted, so nothing leaves 127.0.0.1.
//
// A test skips when node is absent; a runtime that was not installed
// (scripts/install-test-deps.sh) fails the test instead. Everything but
// the wire tap (TapMain) is Linux-only: the process-tree search reads /proc.
package realruntime
