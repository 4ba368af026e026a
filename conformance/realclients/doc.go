// Package realclients grades real ACP clients with acpcheck's client
// checks, in make test: acprun (the adapter as a client), the client the
// official TypeScript SDK 2.4.0 makes (conformance/tsinterop's
// prompt_client.mjs), coder/acp-go-sdk v0.13.0's example client, and acpx
// 0.19.1. Each client's known failures are in <name>.baseline with a
// reason per entry; a failure not listed, or a listed check that passes,
// fails the test, and the run rewrites (with -update) or checks the table
// of conformance/README.md.
//
// It is a module of its own, in go.work, so that coder/acp-go-sdk — whose
// example client the test builds, named by the tool directive of go.mod —
// never enters the SDK's or the adapter's go.mod.
package realclients
