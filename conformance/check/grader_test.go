package check_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/conformance/check"
	"acpkit.dev/conformance/internal/testbin"
)

// refagent is the reference agent binary, built once in TestMain.
var refagent string

func TestMain(m *testing.M) {
	testbin.MainBuilding(m, map[string]*string{testbin.RefAgent: &refagent, testbin.RefClient: &refclient, testbin.ACPCheck: &acpcheckBin})
}

const (
	testTimeout   = 10 * time.Second
	testExitBound = 3 * time.Second
)

// allCaps advertises every optional capability, so no check is skipped
// when acpcheck authenticates with allCapsAuth.
// Audio stays unadvertised, so prompt.unadvertised-content has a kind to
// try. The variants it picks show what acpcheck must accept: session/list paged
// one session at a time, mode ids that are URLs, a mode change confirmed
// by a config_option_update, -32002 for deleting an unknown session.
var allCaps = []string{"--load-session", "--resume", "--close", "--delete", "--auth-methods", allCapsAuth, "--require-auth",
	"--list", "--list-page-size", "1", "--modes", "--mode-ids-url", "--mode-update-as-config", "--config-options", "--delete-strict",
	"--prompt-image", "--prompt-embedded-context"}

// allCapsAuth is the auth method allCaps advertises and requires.
const allCapsAuth = "key"

func grade(t *testing.T, flags ...string) map[string]check.Result {
	t.Helper()
	return gradeAuth(t, "", flags...)
}

// gradeAuth grades with acpcheck's --auth-method set to authMethod.
func gradeAuth(t *testing.T, authMethod string, flags ...string) map[string]check.Result {
	t.Helper()
	rep := gradeReportAuth(t, authMethod, flags...)
	byID := map[string]check.Result{}
	for _, r := range rep.Results {
		byID[r.ID] = r
	}
	require.Len(t, byID, len(check.Standard().Checks()))
	return byID
}

// gradeReport grades the reference agent run with flags.
func gradeReport(t *testing.T, flags ...string) check.Report {
	t.Helper()
	return gradeReportAuth(t, "", flags...)
}

func gradeReportAuth(t *testing.T, authMethod string, flags ...string) check.Report {
	t.Helper()
	rep, err := check.Grade(context.Background(), check.Standard(), check.Config{
		AuthMethod: authMethod,
		Target:     check.Target{Argv: append([]string{refagent}, flags...), Dir: t.TempDir()},
		// Generous bounds: a loaded CI machine must not turn a slow answer
		// into a failure. Only the breakers that fail by silence wait them
		// out.
		Timeout:   testTimeout,
		ExitBound: testExitBound,
	})
	require.NoError(t, err)
	require.Len(t, rep.Results, len(check.Standard().Checks()))
	return rep
}

func TestStandard_ReferenceAgentPassesEveryCheck(t *testing.T) {
	rep := gradeReportAuth(t, allCapsAuth, allCaps...)
	for _, r := range rep.Results {
		assert.Equal(t, check.StatusPass, r.Status, "%s: %s", r.ID, r.Reason)
		assert.Empty(t, r.Transcript, "a passing check keeps no transcript")
	}
	assert.Equal(t, check.VerdictOK, rep.Verdict)
	assert.Equal(t, rep.Mandatory.Total, rep.Mandatory.Graded)
}

// TestStandard_NotificationsBetweenTurnsAreLegitimate: vendor
// notifications before session/new answers, available_commands_update
// after it and session_info_update after every prompt response break no
// check.
func TestStandard_NotificationsBetweenTurnsAreLegitimate(t *testing.T) {
	results := gradeAuth(t, allCapsAuth, append([]string{"--chatty", "--words", "after"}, allCaps...)...)
	for id, r := range results {
		assert.Equal(t, check.StatusPass, r.Status, "%s: %s", id, r.Reason)
	}
}

func TestStandard_CapabilityChecksSkipWhenNotAdvertised(t *testing.T) {
	results := grade(t)
	for id, r := range results {
		if r.Gate != "" {
			assert.Equal(t, check.StatusSkip, r.Status, id)
			assert.Contains(t, r.Reason, "does not advertise", id)
			assert.True(t, r.NotLaunched, "%s: the earlier initialize answers said it is not advertised", id)
		} else {
			assert.Equal(t, check.StatusPass, r.Status, "%s: %s", id, r.Reason)
		}
	}
}

// breaker is a reference-agent flag set that breaks exactly one check's
// requirement, with how acpcheck is run against it.
type breaker struct {
	flags []string
	// authMethod is acpcheck's --auth-method for the run.
	authMethod string
	// alsoFails names other checks the flags fail because those checks
	// pin the same requirement in another situation.
	alsoFails []string
}

// breakers maps every check to the one reference-agent flag set that breaks
// exactly its requirement. Capability flags only advertise what the broken
// behaviour needs to be exercised.
var breakers = map[string]breaker{
	"initialize.version":             {flags: []string{"--protocol-version", "2"}},
	"initialize.negotiation":         {flags: []string{"--echo-protocol-version"}},
	"initialize.capabilities":        {flags: []string{"--malformed-capabilities"}},
	"initialize.agent-info":          {flags: []string{"--no-agent-info"}},
	"auth.unknown-method":            {flags: []string{"--auth-methods", "key", "--accept-unknown-auth"}},
	"auth.method":                    {flags: []string{"--auth-methods", "key", "--fail-authenticate", "7"}, authMethod: "key"},
	"rpc.unknown-method":             {flags: []string{"--unknown-method-code", "-32603"}},
	"rpc.unknown-notification":       {flags: []string{"--answer-notifications"}},
	"rpc.parse-error":                {flags: []string{"--die-on-garbage"}},
	"session.new":                    {flags: []string{"--fail-new-session", "-32603"}},
	"session.unknown-id":             {flags: []string{"--accept-unknown-session"}},
	"prompt.updates-before-response": {flags: []string{"--late-updates"}},
	// A turn cancelled with a permission request pending must end
	// cancelled as well.
	"prompt.cancel":               {flags: []string{"--cancel-stop-reason", "end_turn"}, alsoFails: []string{"prompt.cancel-permission"}},
	"prompt.session-ids":          {flags: []string{"--words", "foreign"}},
	"rpc.meta":                    {flags: []string{"--reject-meta"}},
	"rpc.unknown-members":         {flags: []string{"--reject-unknown-members"}},
	"prompt.cancel-permission":    {flags: []string{"--cancelled-permission-error"}},
	"prompt.cancel-after-turn":    {flags: []string{"--sticky-cancel"}},
	"prompt.after-cancel":         {flags: []string{"--stuck-after-cancel"}},
	"prompt.resource-link":        {flags: []string{"--refuse-resource-link"}},
	"prompt.advertised-content":   {flags: []string{"--prompt-image", "--refuse-advertised-content"}},
	"prompt.unadvertised-content": {flags: []string{"--accept-unadvertised-content"}},
	"prompt.client-capabilities":  {flags: []string{"--ignore-client-capabilities"}},
	"rpc.cancel-request":          {flags: []string{"--drop-cancelled-requests"}},
	"session.load":                {flags: []string{"--load-session", "--load-replay-after-response"}},
	"session.resume":              {flags: []string{"--resume", "--resume-replays"}},
	"session.list":                {flags: []string{"--list", "--list-omit-newest"}},
	"session.list-cwd":            {flags: []string{"--list", "--list-ignore-cwd"}},
	"session.set-mode":            {flags: []string{"--modes", "--set-mode-accepts-unknown"}},
	"session.mode-update":         {flags: []string{"--modes", "--silent-set-mode"}},
	"session.set-config-option":   {flags: []string{"--config-options", "--set-config-stale"}},
	"session.close":               {flags: []string{"--close", "--fail-close"}},
	"session.delete":              {flags: []string{"--delete", "--fail-delete"}},
	"process.stdin-close":         {flags: []string{"--ignore-stdin-close"}},
	"process.sigterm":             {flags: []string{"--ignore-sigterm"}},
}

// moreBreakers break a check's requirement another way: each fails that
// check, and no other.
var moreBreakers = []struct {
	id string
	breaker
}{
	{"session.list", breaker{flags: []string{"--list", "--list-page-size", "1", "--list-cursor-loop"}}},
	{"session.set-mode", breaker{flags: []string{"--modes", "--set-mode-error"}}},
	{"session.set-config-option", breaker{flags: []string{"--config-options", "--set-config-accepts-unknown"}}},
	{"session.close", breaker{flags: []string{"--close", "--close-keeps-session"}}},
}

func TestStandard_EveryCheckHasABreakingFlag(t *testing.T) {
	for _, c := range check.Standard().Checks() {
		assert.Contains(t, breakers, c.ID, "check %s has no breaking flag in the table", c.ID)
	}
}

// TestStandard_EachBreakingFlagFailsExactlyItsCheck proves the grader can
// fail: each broken agent fails the check for the requirement it breaks,
// with a transcript, and no other check.
func TestStandard_EachBreakingFlagFailsExactlyItsCheck(t *testing.T) {
	for _, c := range check.Standard().Checks() {
		t.Run(c.ID, func(t *testing.T) {
			t.Parallel() // each run is mostly waiting on its own processes
			failsExactly(t, c, breakers[c.ID])
		})
	}
	for _, m := range moreBreakers {
		c, ok := check.Standard().Lookup(m.id)
		require.True(t, ok, m.id)
		t.Run(m.id+"/"+strings.Join(m.flags, " "), func(t *testing.T) {
			t.Parallel()
			failsExactly(t, c, m.breaker)
		})
	}
}

// failsExactly grades the agent b breaks and asserts that c fails, with
// a reason and a transcript, that no other check fails, and that the
// exit status follows c's tier.
func failsExactly(t *testing.T, c check.Check[*check.Session], b breaker) {
	t.Helper()
	require.NotEmpty(t, b.flags)
	results := gradeAuth(t, b.authMethod, b.flags...)
	broken := results[c.ID]
	assert.Equal(t, check.StatusFail, broken.Status, "flags %q: %s", b.flags, broken.Reason)
	for _, id := range b.alsoFails {
		assert.Equal(t, check.StatusFail, results[id].Status, "flags %q: %s", b.flags, id)
	}
	assert.NotEmpty(t, broken.Reason)
	assert.NotEmpty(t, broken.Transcript, "a failed check keeps its transcript")
	var rs []check.Result
	for id, r := range results {
		rs = append(rs, r)
		if id != c.ID && !slices.Contains(b.alsoFails, id) {
			assert.NotEqual(t, check.StatusFail, r.Status, "flags %q also failed %s: %s", b.flags, id, r.Reason)
		}
	}
	assert.Equal(t, c.Tier != check.TierAdvisory, check.Failed(rs), "exit status follows the tier")
	if slices.Contains(c.Needs, check.NeedSession) && c.Wire == 0 || newlyShared(c) {
		// The check can run on a shared process: sharing changes no result.
		assertSharedGradesAlike(t, b, results)
	}
}

// newlyShared: the checks that share a process since raw lines and the
// process's end stopped keeping them from it (rpc.parse-error, process.*).
func newlyShared(c check.Check[*check.Session]) bool {
	return c.Wire == check.NeedsRawLines || c.Wire&check.EndsProcess != 0
}

// needsATurn reports whether check id runs a prompt turn.
func needsATurn(id string) bool {
	c, _ := check.Standard().Lookup(id)
	return slices.Contains(c.Needs, check.NeedModel)
}

// TestStandard_PromptFailuresNeedAWorkingModel: a prompt refused for want
// of credentials or backend is "needs a working model", not a failure; the
// first check that meets it launches the agent, the later ones that need a
// turn are reported alike without a launch, and the run is INCOMPLETE.
func TestStandard_PromptFailuresNeedAWorkingModel(t *testing.T) {
	for _, code := range []string{"-32000", "503"} {
		t.Run(code, func(t *testing.T) {
			rep := gradeReportAuth(t, allCapsAuth, append([]string{"--prompt-error", code}, allCaps...)...)
			first := ""
			for _, r := range rep.Results {
				switch {
				case needsATurn(r.ID):
					assert.Equal(t, check.StatusNeedsModel, r.Status, "%s: %s", r.ID, r.Reason)
					if first == "" {
						first = r.ID
						assert.False(t, r.NotLaunched, r.ID)
						assert.Contains(t, r.Reason, code)
						assert.NotEmpty(t, r.Transcript, "the refusal's transcript is kept")
					} else {
						assert.True(t, r.NotLaunched, "%s launched the agent again: %s", r.ID, r.Reason)
						assert.Equal(t, "not launched: needs a working model, as "+first+" found", r.Reason)
						assert.Empty(t, r.Transcript)
					}
				default:
					assert.Equal(t, check.StatusPass, r.Status, "%s: %s", r.ID, r.Reason)
				}
			}
			assert.False(t, check.Failed(rep.Results), "needing a model is not a conformance failure")
			assert.Equal(t, check.VerdictIncomplete, rep.Verdict, "mandatory checks were not graded")
			assert.False(t, rep.OK)
		})
	}
}

// TestStandard_PromptProtocolErrorIsAFailure: an error that is not about
// the model (invalid params) still fails the prompt check.
func TestStandard_PromptProtocolErrorIsAFailure(t *testing.T) {
	results := grade(t, "--prompt-error", "-32602")
	assert.Equal(t, check.StatusFail, results["prompt.updates-before-response"].Status)
}

func TestStandard_SilentAgentTimesOutAndEveryOtherCheckSkips(t *testing.T) {
	// An agent that never answers: initialize times out, every check that
	// needs it skips on the failed prerequisite instead of failing again.
	results, err := check.Run(context.Background(), check.Standard(), check.Config{
		Target:    check.Target{Argv: []string{refagent, "--be-descendant", "1m"}, Dir: t.TempDir()},
		Timeout:   200 * time.Millisecond,
		ExitBound: 200 * time.Millisecond,
		Only:      []string{"initialize.version", "session.new"},
	})
	require.NoError(t, err)
	require.Len(t, results, 2)
	assert.Equal(t, check.StatusFail, results[0].Status)
	assert.Contains(t, results[0].Reason, "timed out")
	assert.Equal(t, check.StatusSkip, results[1].Status)
	assert.Contains(t, results[1].Reason, "prerequisite failed")
}

func TestRun_LaunchFailureIsAnError(t *testing.T) {
	_, err := check.Run(context.Background(), check.Standard(), check.Config{
		Target:  check.Target{Argv: []string{t.TempDir() + "/no-such-agent"}, Dir: t.TempDir()},
		Timeout: time.Second, ExitBound: time.Second,
	})
	require.Error(t, err)
}

// TestReadme_ListsEveryCheckWithItsBreakingFlag keeps the README's table in
// step with the registry and with the breakers the tests use.
func TestReadme_ListsEveryCheckWithItsBreakingFlag(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	readme := string(b)
	for _, c := range check.Standard().Checks() {
		row := fmt.Sprintf("| `%s` | %s |", c.ID, c.Tier)
		assert.Contains(t, readme, row, "README row for %s", c.ID)
		assert.Contains(t, readme, "`"+strings.Join(breakers[c.ID].flags, " ")+"` |", "README breaking flag for %s", c.ID)
	}
}

// TestStandard_LoggedOutAgentNeedsACredential: -32000 on session/new or
// initialize is "needs a credential" and never a failure. The agent is
// launched once for the refusal plus once for each check that needs no
// more than what it granted; every other check is reported alike without a
// launch, and the run is INCOMPLETE, with the reason in the summary.
func TestStandard_LoggedOutAgentNeedsACredential(t *testing.T) {
	for _, tc := range []struct {
		flag, first string
		// granted is what the logged-out agent still serves.
		granted check.Need
	}{
		{"--fail-new-session", "session.new", check.NeedHandshake},
		{"--fail-initialize", "initialize.version", ""},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			rep := gradeReport(t, tc.flag, "-32000")
			needs := map[string][]check.Need{}
			for _, c := range check.Standard().Checks() {
				needs[c.ID] = c.Needs
			}
			launches := 0
			for _, r := range rep.Results {
				assert.NotEqual(t, check.StatusFail, r.Status, "%s: %s", r.ID, r.Reason)
				if !r.NotLaunched {
					launches++
				}
				onlyGranted := tc.granted != "" && !slices.ContainsFunc(needs[r.ID], func(n check.Need) bool { return n != tc.granted })
				switch {
				case r.ID == tc.first:
					assert.Equal(t, check.StatusNeedsCredential, r.Status, r.Reason)
					assert.Contains(t, r.Reason, "-32000")
					assert.NotEmpty(t, r.Transcript, "the refusal's transcript is kept")
				case r.Gate != "" && tc.granted != "":
					// The initialize answers said what is not advertised;
					// what only session/new says stays unknown.
					assert.True(t, r.NotLaunched, "%s: %s", r.ID, r.Reason)
					assert.Contains(t, []check.Status{check.StatusSkip, check.StatusNeedsCredential}, r.Status, r.ID)
				case onlyGranted:
					assert.False(t, r.NotLaunched, "%s needs only what the agent grants: %s", r.ID, r.Reason)
				default:
					assert.True(t, r.NotLaunched, "%s launched the logged-out agent again (%s)", r.ID, r.Reason)
					assert.Equal(t, check.StatusNeedsCredential, r.Status, r.ID)
					assert.Equal(t, "not launched: needs a credential, as "+tc.first+" found", r.Reason)
				}
			}
			if tc.granted == "" {
				assert.Equal(t, 1, launches, "an agent that refuses initialize is launched once")
			}
			assert.Equal(t, check.VerdictIncomplete, rep.Verdict)
			assert.Equal(t, check.ExitIncomplete, rep.Verdict.ExitCode())
			assert.Less(t, rep.Mandatory.Graded, rep.Mandatory.Total)
			groups := rep.NotGradedGroups()
			require.NotEmpty(t, groups)
			assert.Equal(t, check.StatusNeedsCredential, groups[0].Status)
			assert.Contains(t, groups[0].Reason, "-32000", "the summary says why, from the refusal itself")
		})
	}
}

// TestStandard_AuthMethodLogsInBeforeSessions: an agent that needs
// authenticate is logged out without --auth-method (INCOMPLETE, with the
// hint), and fully graded with it; authenticate itself is graded only
// with the method asked for.
func TestStandard_AuthMethodLogsInBeforeSessions(t *testing.T) {
	flags := []string{"--auth-methods", "key,oauth", "--require-auth"}
	rep := gradeReportAuth(t, "", flags...)
	byID := map[string]check.Result{}
	for _, r := range rep.Results {
		byID[r.ID] = r
	}
	assert.Equal(t, check.VerdictIncomplete, rep.Verdict)
	assert.Equal(t, check.StatusNeedsCredential, byID["session.new"].Status)
	assert.Contains(t, byID["session.new"].Reason, "--auth-method")
	assert.Equal(t, check.StatusPass, byID["auth.unknown-method"].Status)
	assert.Equal(t, check.StatusSkip, byID["auth.method"].Status)
	assert.Contains(t, byID["auth.method"].Reason, "run with --auth-method ID (one of key, oauth)")

	rep = gradeReportAuth(t, "oauth", flags...)
	for _, r := range rep.Results {
		if r.Gate == "" || r.ID == "auth.method" || r.ID == "auth.unknown-method" {
			assert.Equal(t, check.StatusPass, r.Status, "%s: %s", r.ID, r.Reason)
		}
	}
	assert.Equal(t, check.VerdictOK, rep.Verdict)

	rep = gradeReportAuth(t, "sso", flags...)
	for _, r := range rep.Results {
		if r.ID == "auth.method" {
			assert.Equal(t, check.StatusSkip, r.Status)
			assert.Contains(t, r.Reason, `--auth-method "sso" is not among the methods`)
		}
		if r.ID == "session.new" {
			assert.Equal(t, check.StatusNeedsCredential, r.Status)
			assert.Contains(t, r.Reason, `authenticate "sso" (--auth-method) answered error -32602`)
		}
	}
}

func TestGrade_NamesTheAgentAndReportsProgress(t *testing.T) {
	var seen []check.Progress
	rep, err := check.Grade(context.Background(), check.Standard(), check.Config{
		Target:          check.Target{Argv: []string{refagent, "--agent-name", "graded-agent", "--agent-version", "3.1.4"}, Dir: t.TempDir()},
		Timeout:         testTimeout,
		ExitBound:       testExitBound,
		Only:            []string{"initialize.version", "session.new"},
		Progress:        func(p check.Progress) { seen = append(seen, p) },
		KeepTranscripts: true,
	})
	require.NoError(t, err)
	assert.Equal(t, check.Peer{Name: "graded-agent", Version: "3.1.4"}, rep.Peer)
	assert.Equal(t, []check.Progress{{N: 1, Total: 2, ID: "initialize.version"}, {N: 2, Total: 2, ID: "session.new"}}, seen)
	for _, r := range rep.Results {
		assert.Equal(t, check.StatusPass, r.Status)
		assert.NotEmpty(t, r.Transcript, "KeepTranscripts keeps a passing check's transcript too")
	}
}

// TestGrade_ReportsWhatTheAgentAdvertised: the report carries the gates
// the grading learned, true and false, from initialize and session/new,
// and every auth method, so a table of agents needs no launch of its own.
func TestGrade_ReportsWhatTheAgentAdvertised(t *testing.T) {
	rep, err := check.Grade(context.Background(), check.Standard(), check.Config{
		Target:    check.Target{Argv: []string{refagent, "--load-session", "--list", "--modes", "--mcp-http", "--auth-methods", "key,other"}, Dir: t.TempDir()},
		Timeout:   testTimeout,
		ExitBound: testExitBound,
		Only:      []string{"initialize.version", "session.new"},
	})
	require.NoError(t, err)
	g := rep.Advertised.Gates
	for _, gate := range []string{check.GateLoadSession, check.GateList, check.GateModes, check.GateMCPHTTP, check.GateAuthMethods} {
		assert.True(t, g[gate], gate)
	}
	for _, gate := range []string{check.GateResume, check.GateClose, check.GateDelete, check.GateMCPSSE, check.GateConfigOptions} {
		v, learned := g[gate]
		assert.True(t, learned, "%s was learned", gate)
		assert.False(t, v, gate)
	}
	assert.Equal(t, []string{"key", "other"}, rep.Advertised.AuthMethods)
}
