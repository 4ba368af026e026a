package check_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"acpkit.dev/conformance/check"
)

// countedGrading is one grading of the reference agent and how many times
// it launched the agent.
type countedGrading struct {
	rep      check.Report
	launches int
}

// gradeCounted grades refagent run with flags, sharing processes or not,
// counting launches through a shell that logs one line per launch and
// execs the agent (same pid, so every process is still reaped).
func gradeCounted(t *testing.T, share bool, b breaker) countedGrading {
	t.Helper()
	log := filepath.Join(t.TempDir(), "launches")
	argv := append([]string{"/bin/sh", "-c", `echo launch >> "$0"; exec "$@"`, log, refagent}, b.flags...)
	rep, err := check.Grade(context.Background(), check.Standard(), check.Config{
		AuthMethod:      b.authMethod,
		Target:          check.Target{Argv: argv, Dir: t.TempDir()},
		Timeout:         testTimeout,
		ExitBound:       testExitBound,
		KeepTranscripts: true,
		ShareProcess:    share,
	})
	require.NoError(t, err)
	require.Len(t, rep.Results, len(check.Standard().Checks()))
	out, err := os.ReadFile(log)
	require.NoError(t, err)
	return countedGrading{rep: rep, launches: bytes.Count(out, []byte("launch\n"))}
}

// assertSameResults asserts that a shared grading reports every check as
// the unshared one does.
func assertSameResults(t *testing.T, fresh, shared check.Report) {
	t.Helper()
	for i, f := range fresh.Results {
		s := shared.Results[i]
		require.Equal(t, f.ID, s.ID)
		assert.Equal(t, f.Status, s.Status, "%s: fresh %q, shared %q", f.ID, f.Reason, s.Reason)
		assert.Equal(t, f.NotLaunched, s.NotLaunched, f.ID)
	}
	assert.Equal(t, fresh.Verdict, shared.Verdict)
	assert.Equal(t, fresh.Mandatory, shared.Mandatory)
}

// TestShareProcess_FewerLaunchesSameResults: sharing one process between
// the checks that need the handshake or a session, and nothing of the
// process's own, grades the reference agent with every capability in far
// fewer launches than checks, with the results of a launch per check.
func TestShareProcess_FewerLaunchesSameResults(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	all := breaker{flags: allCaps, authMethod: allCapsAuth}
	fresh, shared := gradeCounted(t, false, all), gradeCounted(t, true, all)
	assertSameResults(t, fresh.rep, shared.rep)
	assert.Equal(t, check.VerdictOK, shared.rep.Verdict)
	sharedChecks, handshakeOnly := 0, 0
	for _, c := range check.Standard().Checks() {
		// Raw lines reach a process as written, shared or not.
		if slices.Contains(c.Needs, check.NeedHandshake) && c.Wire&^check.NeedsRawLines == 0 {
			sharedChecks++
			if !slices.Contains(c.Needs, check.NeedSession) {
				handshakeOnly++
			}
		}
	}
	require.Greater(t, sharedChecks, 20)
	require.GreaterOrEqual(t, handshakeOnly, 6, "the handshake checks that only read initialize's answer share too")
	assert.Equal(t, len(check.Standard().Checks()), fresh.launches, "unshared: a launch per check")
	// process.sigterm, the first check that ends the process, ends the
	// shared one: one launch fewer again.
	assert.Equal(t, fresh.launches-sharedChecks, shared.launches, "shared: one launch for all %d checks that can share and process.sigterm", sharedChecks)
	for _, r := range shared.rep.Results {
		assert.Empty(t, r.Regraded, r.ID)
	}
}

// TestShareProcess_TranscriptsHoldOnlyTheirCheck: a check on a shared
// process records its own lines, says which process it shares and whose
// handshake stands, and none of the lines of the checks before it.
func TestShareProcess_TranscriptsHoldOnlyTheirCheck(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	g := gradeCounted(t, true, breaker{flags: allCaps, authMethod: allCapsAuth})
	byID := map[string]check.Result{}
	for _, r := range g.rep.Results {
		byID[r.ID] = r
	}
	first := text(byID["initialize.version"].Transcript)
	assert.Contains(t, first, "launched for initialize.version")
	assert.Contains(t, first, `"method":"initialize"`)
	// initialize.negotiation sends an initialize of its own: never shared.
	own := text(byID["initialize.negotiation"].Transcript)
	assert.NotContains(t, own, "shared process")
	assert.Contains(t, own, `"method":"initialize"`)
	later := text(byID["prompt.updates-before-response"].Transcript)
	assert.Contains(t, later, "initialized by initialize.version")
	assert.Contains(t, later, "initialize not sent again")
	assert.NotContains(t, later, `"method":"initialize"`)
	assert.NotContains(t, later, check.UnknownSessionID, "session.unknown-id's lines stay in its own transcript")
	assert.NotContains(t, later, `"method":"authenticate"`, "authenticated once per process, by auth.method")
	assert.Equal(t, 1, strings.Count(later, `"method":"session/new"`))
	// The shared process's last use ends it: SIGTERM, the first check
	// that ends a process, gets it, and stdin-close a fresh launch, which
	// says nothing of sharing.
	assert.Contains(t, text(byID["process.sigterm"].Transcript), "initialized by initialize.version (leased to process.sigterm)")
	assert.NotContains(t, text(byID["process.stdin-close"].Transcript), "shared process")
	assert.Contains(t, text(byID["rpc.parse-error"].Transcript), "initialized by initialize.version", "raw lines reach a shared process as written")
}

func text(lines []check.Line) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestShareProcess_FailureIsGradedAgainFresh: a check that fails on the
// shared process is graded again on a fresh launch, the report says so,
// and the next check gets a new shared process.
func TestShareProcess_FailureIsGradedAgainFresh(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	g := gradeCounted(t, true, breakers["session.unknown-id"])
	var regraded []string
	for _, r := range g.rep.Results {
		if r.Regraded != "" {
			regraded = append(regraded, r.ID)
		}
	}
	require.Equal(t, []string{"session.unknown-id"}, regraded)
	res := resultOf(g.rep.Results, "session.unknown-id")
	assert.Equal(t, check.StatusFail, res.Status)
	assert.Contains(t, res.Regraded, "on the shared process it ended fail")
	require.NotEmpty(t, res.Transcript)
	assert.Contains(t, res.Transcript[0].Text, "graded again on this fresh launch")
	assert.NotContains(t, text(res.Transcript), "shared process pid")
	next := text(resultOf(g.rep.Results, "prompt.updates-before-response").Transcript)
	assert.Contains(t, next, "launched for prompt.updates-before-response", "a new shared process after the failure")
	var out bytes.Buffer
	require.NoError(t, check.WriteTable(&out, g.rep))
	assert.Contains(t, out.String(), "graded again on a fresh launch, after not passing on the shared process: 1\n  session.unknown-id: on the shared process it ended fail")
}

func resultOf(rs []check.Result, id string) check.Result {
	i := slices.IndexFunc(rs, func(r check.Result) bool { return r.ID == id })
	if i < 0 {
		return check.Result{}
	}
	return rs[i]
}

// assertSharedGradesAlike grades the agent b breaks again with shared
// processes: every check ends as it did with a launch each (results), and
// no more launches are made but for the checks graded again.
func assertSharedGradesAlike(t *testing.T, b breaker, results map[string]check.Result) {
	t.Helper()
	shared := gradeCounted(t, true, b)
	regraded, unshared := 0, 0
	for _, r := range shared.rep.Results {
		assert.Equal(t, results[r.ID].Status, r.Status, "flags %q, shared: %s: %s", b.flags, r.ID, r.Reason)
		assert.Equal(t, results[r.ID].NotLaunched, r.NotLaunched, "flags %q, shared: %s", b.flags, r.ID)
		if r.Regraded != "" {
			regraded++ // a second launch: the fresh one it is graded again on
		}
		if !r.NotLaunched {
			unshared++
		}
	}
	assert.LessOrEqual(t, shared.launches, unshared+regraded, "flags %q", b.flags)
}

// TestShareProcess_UntouchedSkipIsNotGradedAgain: a check that sends the
// shared process nothing (auth.method without --auth-method skips on the
// handshake's answer alone) ends as it would on a fresh launch, so it is
// not launched again, and the shared process serves the next check.
func TestShareProcess_UntouchedSkipIsNotGradedAgain(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	b := breaker{flags: []string{"--auth-methods", allCapsAuth}}
	fresh, shared := gradeCounted(t, false, b), gradeCounted(t, true, b)
	assertSameResults(t, fresh.rep, shared.rep)
	res := resultOf(shared.rep.Results, "auth.method")
	require.Equal(t, check.StatusSkip, res.Status, res.Reason)
	assert.Empty(t, res.Regraded)
	for _, r := range shared.rep.Results {
		assert.Empty(t, r.Regraded, r.ID)
	}
	next := text(resultOf(shared.rep.Results, "rpc.unknown-method").Transcript)
	assert.Contains(t, next, "initialized by initialize.version", "auth.method left the shared process to the next check")
}

// TestShareProcess_SkipByAdvertisedContentIsNotGradedAgain: an agent that
// advertises every optional content kind leaves prompt.unadvertised-content
// nothing to try; the check says so from the initialize answer, before it
// sends the shared process anything, so it is not graded again on a fresh
// launch (which would skip the same way).
func TestShareProcess_SkipByAdvertisedContentIsNotGradedAgain(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	b := breaker{flags: []string{"--prompt-image", "--prompt-audio", "--prompt-embedded-context"}}
	fresh, shared := gradeCounted(t, false, b), gradeCounted(t, true, b)
	assertSameResults(t, fresh.rep, shared.rep)
	res := resultOf(shared.rep.Results, "prompt.unadvertised-content")
	require.Equal(t, check.StatusSkip, res.Status, res.Reason)
	assert.Empty(t, res.Regraded)
}

// TestShareProcess_EndingChecksAloneLaunchEach: graded alone, the checks
// that end the process find no shared process to end (no check before
// them launched one) and launch afresh, one each, passing as unshared.
func TestShareProcess_EndingChecksAloneLaunchEach(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	log := filepath.Join(t.TempDir(), "launches")
	rep, err := check.Grade(context.Background(), check.Standard(), check.Config{
		Target:       check.Target{Argv: []string{"/bin/sh", "-c", `echo launch >> "$0"; exec "$@"`, log, refagent}, Dir: t.TempDir()},
		Timeout:      testTimeout,
		ExitBound:    testExitBound,
		ShareProcess: true,
		Only:         []string{"process.stdin-close", "process.sigterm"},
	})
	require.NoError(t, err)
	require.Len(t, rep.Results, 2)
	for _, r := range rep.Results {
		assert.Equal(t, check.StatusPass, r.Status, "%s: %s", r.ID, r.Reason)
		assert.Empty(t, r.Regraded, r.ID)
	}
	out, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, 2, bytes.Count(out, []byte("launch\n")))
}
