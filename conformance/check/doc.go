// Package check is acpcheck's grader: a registry of conformance checks for
// any ACP agent, a runner that launches the agent afresh for each check, the
// wire transcript each check saw, table and JSON reports, and known-failure
// baselines.
//
// # Model
//
// A [Check] has a stable ID, a [Tier] and a Run func. The runner launches
// the agent command for every check (so one check's damage never leaks into
// the next), hands the check a [Session] — a raw JSON-RPC view of the
// process that records every line both ways, plus stderr and process events
// — and turns the check's return value into a [Result]. A check that does
// not pass keeps its transcript.
//
// acpcheck deliberately speaks the protocol through its own line-level
// client rather than an SDK connection: a grader must see what the agent
// actually wrote (an error without an id, a response to a notification, a
// line that is not JSON) instead of what an SDK normalises it into.
//
// While a check runs, the session answers the agent's own requests as an
// unattended client would: a permission request gets its first refusing
// option (or the cancelled outcome), any other method gets -32601.
//
// # Tiers and statuses
//
// Mandatory checks hold for every agent; capability-gated ones run only
// when the agent advertises the capability (otherwise they are skipped);
// advisory ones never change the exit status. A check that needs a prompt
// turn reports [StatusNeedsModel] instead of failing when the agent answers
// the prompt with an authentication or backend error ([ModelUnavailable]).
//
// # Baselines
//
// A [Baseline] lists checks known to fail for one peer. A listed check that
// fails again is reported as known and does not fail the run; a listed
// check that now passes is reported as fixed and does fail the run, so the
// baseline cannot silently go stale.
package check
