// Package realruntime runs the seven real agent runtimes pinned in
// conformance/runtimes offline for tests: HOME in a temporary directory
// with the runtime's settings written there, the model API pointed at a
// fakemodel.Server, and every proxy variable pointed at that server too
// (it refuses to forward, and records what was asked for), with loopback
// exempted, so nothing leaves 127.0.0.1.
//
// Each runtime is one entry of Specs: its npm package, the arguments that
// put it in ACP mode, the model API it calls, how it is set up offline,
// the tool calls that make it ask for a write and run a command, and what
// it does after a refused permission. The suite's scenarios (Scenarios)
// run against every entry; one a runtime cannot do is a line, with its
// reason, of its conformance/runtimes/<name>/scenarios.baseline
// (Baseline), and a listed scenario that passes fails the test.
//
// A test skips when node is absent; a runtime that was not installed
// (scripts/install-test-deps.sh) fails the test instead. Everything but
// the wire tap (TapMain) is Linux-only: the process-tree search reads /proc.
package realruntime
