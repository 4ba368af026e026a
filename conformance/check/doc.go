// Package check is acpcheck's grader: registries of conformance checks, a
// runner that launches the graded peer afresh for each check, the wire
// transcript each check saw, a verdict that says honestly what was not
// graded, table and JSON reports, and known-failure baselines.
//
// # Model
//
// A [Check] has a stable ID, a [Tier], the requirement it pins (schema or
// protocol text), the capability Gate it needs when it is a capability
// check, the [Need]s it has beyond a launched peer, and a Run func. Checks
// are generic in the subject they drive: agent checks drive a [Session],
// and a [Registry] holds the checks of one [Role]. [GradeWith] runs a
// registry for any subject that implements [Instance], launching one
// instance per check (so one check's damage never leaks into the next);
// [Grade] is that for agents, from a [Config].
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
// # Clients
//
// [GradeClient] grades an ACP client with the [ClientStandard] registry:
// each check launches the client afresh with [AgentPlaceholder] in its
// command line replaced by the scenario agent's (a link to an acpcheck
// executable, [ClientConfig].AgentProgram), which the client starts and
// which relays to the grader over a private Unix socket. A check drives a
// [ClientRun]: [ClientRun.Play] serves the agent's side with a
// [Scenario] — the default agent plus the hooks the check sets — and the
// check then judges what the client sent, what the agent process saw
// (its stdin ending, signals, its exit) and how the client ended.
//
// # Tiers, statuses and the verdict
//
// Mandatory checks hold for every agent; capability-gated ones run only
// when the agent advertises the capability (otherwise they are skipped);
// advisory ones never change the exit status. Only a pass or a fail
// judges a requirement ([Status.Graded]); a check that could not judge
// says why: [StatusSkip] (not applicable, a prerequisite graded elsewhere
// failed, nothing to observe), [StatusNeedsModel] (a prompt turn answered
// with an authentication or backend error, [ModelUnavailable]) or
// [StatusNeedsCredential] (the agent is logged out).
//
// A need found unavailable is found once: the checks after it that declare
// the need are reported with the same status without launching the peer
// again, and a capability check whose gate the earlier answers showed
// unadvertised is skipped without a launch. So a logged-out agent costs one
// launch plus one for each check that needs no session.
//
// [Judge] turns the results into a [Verdict]: OK only when every mandatory
// check ran and passed; FAILED when a mandatory or advertised-capability
// check failed (or a baseline is stale); INCOMPLETE, with its own exit
// status, when nothing failed but a mandatory check did not run. A
// [Report] carries the verdict, the counts, and the [Coverage] of the
// mandatory checks: how many were graded, and why the others were not.
//
// # Baselines
//
// A [Baseline] lists checks known to fail for one peer. A listed check that
// fails again is reported as known and does not fail the run; a listed
// check that now passes is reported as fixed and does fail the run, so the
// baseline cannot silently go stale. A check listed as intermittent
// ("CHECK-ID?": the peer fails it in some runs only) is known when it
// fails and fails nothing when it passes.
//
// # Secrets
//
// Values the user hands the peer as credentials ([Target].Secrets,
// [Options].Secrets) are masked wherever they occur in transcripts and
// reasons, before anything is cut to length or printed.
package check
