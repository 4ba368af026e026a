package check_test

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/conformance/check"
)

func sampleResults() []check.Result {
	return []check.Result{
		{ID: "initialize.version", Tier: check.TierMandatory, Status: check.StatusPass},
		{ID: "prompt.cancel", Tier: check.TierMandatory, Status: check.StatusFail,
			Reason:     "cancelled turn ended with stopReason \"end_turn\"",
			Transcript: []check.Line{{At: 1500 * time.Microsecond, Dir: check.DirSend, Text: `{"method":"session/cancel"}`}}},
		{ID: "session.load", Tier: check.TierCapability, Status: check.StatusSkip, Reason: "agent does not advertise loadSession"},
		{ID: "process.sigterm", Tier: check.TierAdvisory, Status: check.StatusFail, Reason: "still running"},
	}
}

// report builds a judged agent report of rs.
func report(argv []string, peer check.Peer, rs []check.Result) check.Report {
	rep := check.Report{Role: check.RoleAgent, Command: argv, Peer: peer, Registered: len(rs), Results: rs}
	rep.Judge()
	return rep
}

func TestWriteTable_RowsSummaryAndTranscripts(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, check.WriteTable(&b, report(nil, check.Peer{Name: "gemini-cli", Version: "0.9.0"}, sampleResults())))
	out := b.String()
	assert.Regexp(t, `(?m)^prompt\.cancel\s+mandatory\s+fail\s+cancelled turn ended`, out)
	assert.Regexp(t, `(?m)^session\.load\s+capability\s+skip\s+agent does not advertise`, out)
	assert.True(t, strings.HasPrefix(out, "agent: gemini-cli 0.9.0\n"), "the table names the agent graded")
	assert.Contains(t, out, "4 checks: 1 pass, 2 fail (0 known), 1 skip, 0 needs a working model, 0 needs a credential, 0 fixed since the baseline; 2 of 2 mandatory graded — FAILED (gemini-cli 0.9.0)")
	assert.NotContains(t, out, "not graded:", "every mandatory check was graded")
	assert.Contains(t, out, "--- prompt.cancel (fail)")
	assert.Contains(t, out, `     1.5ms send   {"method":"session/cancel"}`)
}

// TestWriteTable_SaysWhichMandatoryChecksWereNotGradedAndWhy: a logged-out
// agent's table groups the ungraded mandatory checks by why, with the
// refusal that caused it, and the verdict is INCOMPLETE.
func TestWriteTable_SaysWhichMandatoryChecksWereNotGradedAndWhy(t *testing.T) {
	refusal := "session/new answered error -32000: authentication required"
	rs := []check.Result{
		{ID: "initialize.version", Tier: check.TierMandatory, Status: check.StatusPass},
		{ID: "session.new", Tier: check.TierMandatory, Status: check.StatusNeedsCredential, Reason: refusal},
		{ID: "prompt.cancel", Tier: check.TierMandatory, Status: check.StatusNeedsCredential, NotLaunched: true,
			Reason: "not launched: needs a credential, as session.new found"},
		{ID: "prompt.session-ids", Tier: check.TierAdvisory, Status: check.StatusNeedsCredential, NotLaunched: true,
			Reason: "not launched: needs a credential, as session.new found"},
		{ID: "process.stdin-close", Tier: check.TierMandatory, Status: check.StatusSkip, Reason: "prerequisite failed: x"},
	}
	var b bytes.Buffer
	rep := report([]string{"gemini", "--acp"}, check.Peer{}, rs)
	require.NoError(t, check.WriteTable(&b, rep))
	out := b.String()
	assert.True(t, strings.HasPrefix(out, "agent: an agent that does not name itself\n"), out)
	assert.Contains(t, out, "\nnot graded: 3 of 4 mandatory checks\n"+
		"  needs a credential (2): session.new, prompt.cancel — "+refusal+"\n"+
		"  skip (1): process.stdin-close — prerequisite failed: x\n")
	assert.Contains(t, out, "1 of 4 mandatory graded — INCOMPLETE (an agent that does not name itself)")
	assert.Equal(t, check.VerdictIncomplete, rep.Verdict)
	assert.False(t, rep.OK)
}

func TestWriteJSON_RoundTrips(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, check.WriteJSON(&b, report([]string{"agent", "--acp"}, check.Peer{Name: "gemini-cli", Version: "0.9.0"}, sampleResults())))
	var rep check.Report
	require.NoError(t, json.Unmarshal(b.Bytes(), &rep))
	assert.False(t, rep.OK)
	assert.Equal(t, check.VerdictFailed, rep.Verdict)
	assert.Equal(t, check.RoleAgent, rep.Role)
	assert.Equal(t, []string{"agent", "--acp"}, rep.Command)
	assert.Equal(t, check.Peer{Name: "gemini-cli", Version: "0.9.0"}, rep.Peer)
	assert.Equal(t, 2, rep.Summary.Fail)
	assert.Equal(t, check.Coverage{Total: 2, Graded: 2}, rep.Mandatory)
	require.Len(t, rep.Results, 4)
	assert.Equal(t, check.StatusFail, rep.Results[1].Status)
	assert.Equal(t, check.DirSend, rep.Results[1].Transcript[0].Dir)
}

func TestFailed_FollowsTiers(t *testing.T) {
	advisoryOnly := []check.Result{{ID: "a", Tier: check.TierAdvisory, Status: check.StatusFail}}
	assert.False(t, check.Failed(advisoryOnly))
	gated := []check.Result{{ID: "a", Tier: check.TierCapability, Status: check.StatusFail}}
	assert.True(t, check.Failed(gated))
	model := []check.Result{{ID: "a", Tier: check.TierMandatory, Status: check.StatusNeedsModel}}
	assert.False(t, check.Failed(model))
}

// TestJudge_OKOnlyWhenEveryMandatoryCheckRanAndPassed: the verdict and its
// exit status for each way a run can end.
func TestJudge_OKOnlyWhenEveryMandatoryCheckRanAndPassed(t *testing.T) {
	pass := check.Result{ID: "m", Tier: check.TierMandatory, Status: check.StatusPass}
	for name, tc := range map[string]struct {
		rs   []check.Result
		want check.Verdict
		exit int
	}{
		"all passed": {[]check.Result{pass}, check.VerdictOK, 0},
		"capability skipped": {[]check.Result{pass, {ID: "c", Tier: check.TierCapability, Status: check.StatusSkip}},
			check.VerdictOK, 0},
		"advisory failed": {[]check.Result{pass, {ID: "a", Tier: check.TierAdvisory, Status: check.StatusFail}},
			check.VerdictOK, 0},
		"known failure": {[]check.Result{pass, {ID: "k", Tier: check.TierMandatory, Status: check.StatusFail, Known: true}},
			check.VerdictOK, 0},
		"mandatory needs a model": {[]check.Result{pass, {ID: "n", Tier: check.TierMandatory, Status: check.StatusNeedsModel}},
			check.VerdictIncomplete, 3},
		"mandatory needs a credential": {[]check.Result{{ID: "n", Tier: check.TierMandatory, Status: check.StatusNeedsCredential}},
			check.VerdictIncomplete, 3},
		"mandatory skipped": {[]check.Result{pass, {ID: "s", Tier: check.TierMandatory, Status: check.StatusSkip}},
			check.VerdictIncomplete, 3},
		"failure wins over incomplete": {[]check.Result{
			{ID: "f", Tier: check.TierCapability, Status: check.StatusFail},
			{ID: "n", Tier: check.TierMandatory, Status: check.StatusNeedsModel}}, check.VerdictFailed, 1},
		"stale baseline": {[]check.Result{{ID: "m", Tier: check.TierMandatory, Status: check.StatusPass, Fixed: true}},
			check.VerdictFailed, 1},
	} {
		t.Run(name, func(t *testing.T) {
			v := check.Judge(tc.rs)
			assert.Equal(t, tc.want, v)
			assert.Equal(t, tc.exit, v.ExitCode())
		})
	}
}

func TestBaseline_KnownFailureAndStaleEntry(t *testing.T) {
	b, err := check.ParseBaseline(strings.NewReader(`
# known failures of some runtime
prompt.cancel   answers end_turn after a cancel
initialize.version
`), check.Standard())
	require.NoError(t, err)
	assert.Equal(t, "answers end_turn after a cancel", b["prompt.cancel"])

	rs := sampleResults()
	b.Apply(rs)
	assert.True(t, rs[1].Known, "a listed failure is known")
	assert.True(t, rs[0].Fixed, "a listed check that passes is reported fixed")
	assert.True(t, check.Failed(rs), "a stale baseline fails the run")

	rs = sampleResults()[1:]
	b.Apply(rs)
	assert.False(t, check.Failed(rs), "only known and advisory failures remain")
	c := check.Count(rs)
	assert.Equal(t, 1, c.Known)
}

// TestBaseline_IntermittentEntry: "ID?" lists a failure the peer shows in
// some runs only. Failing, it is known; passing, it is not fixed; either
// way nothing fails the run and the count of such entries says so.
func TestBaseline_IntermittentEntry(t *testing.T) {
	b, err := check.ParseBaseline(strings.NewReader("prompt.cancel?  loses the race at times\ninitialize.version?  at times\n"), check.Standard())
	require.NoError(t, err)
	assert.Equal(t, "loses the race at times", b["prompt.cancel?"])

	rs := sampleResults()
	b.Apply(rs)
	assert.True(t, rs[0].Intermittent)
	assert.False(t, rs[0].Fixed, "an intermittent entry that passes is not stale")
	assert.False(t, rs[0].Known)
	assert.Equal(t, "pass (fails some runs)", check.Label(rs[0]))
	assert.True(t, rs[1].Known, "an intermittent entry that fails is known")
	assert.Equal(t, "fail (known, intermittent)", check.Label(rs[1]))
	assert.False(t, rs[2].Intermittent, "an unlisted check is not marked")
	assert.False(t, check.Failed(rs), "neither outcome fails the run")
	c := check.Count(rs)
	assert.Equal(t, 2, c.Intermittent)
	assert.Equal(t, 1, c.Known)
	assert.Equal(t, 0, c.Fixed)

	rep := report([]string{"agent"}, check.Peer{Name: "agent", Version: "1"}, rs)
	assert.Contains(t, check.SummaryLine(rep), "0 fixed since the baseline, 2 listed as intermittent")
}

func TestParseBaseline_RefusesUnknownAndDuplicateIDs(t *testing.T) {
	_, err := check.ParseBaseline(strings.NewReader("prompt.cancle typo\n"), check.Standard())
	require.ErrorIs(t, err, check.ErrBaseline)
	assert.Contains(t, err.Error(), "line 1")
	_, err = check.ParseBaseline(strings.NewReader("prompt.cancel a\nprompt.cancel b\n"), check.Standard())
	require.ErrorIs(t, err, check.ErrBaseline)
	for _, twice := range []string{"prompt.cancel a\nprompt.cancel? b\n", "prompt.cancel? a\nprompt.cancel b\n"} {
		_, err = check.ParseBaseline(strings.NewReader(twice), check.Standard())
		require.ErrorIs(t, err, check.ErrBaseline, "listed as known and as intermittent: %q", twice)
	}
	_, err = check.ParseBaseline(strings.NewReader("prompt.cancle? typo\n"), check.Standard())
	require.ErrorIs(t, err, check.ErrBaseline, "an intermittent entry's ID is checked too")
}

// FuzzParseBaseline: any file parses or fails with ErrBaseline.
func FuzzParseBaseline(f *testing.F) {
	f.Add("# c\nprompt.cancel note\n\n")
	f.Add("initialize.version\ninitialize.version\n")
	f.Add("nope")
	f.Add("prompt.cancel? sometimes\nprompt.cancel\n")
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := check.ParseBaseline(strings.NewReader(s), check.Standard()); err != nil && !errorsIsBaseline(err) {
			t.Fatalf("error of the wrong kind: %v", err)
		}
	})
}

func errorsIsBaseline(err error) bool {
	return bytes.Contains([]byte(err.Error()), []byte("bad baseline"))
}

func ExampleBaseline_Apply() {
	reg := check.Standard()
	known, err := check.ParseBaseline(strings.NewReader("prompt.cancel  answers end_turn after a cancel\n"), reg)
	if err != nil {
		panic(err)
	}
	results := []check.Result{
		{ID: "initialize.version", Tier: check.TierMandatory, Status: check.StatusPass},
		{ID: "prompt.cancel", Tier: check.TierMandatory, Status: check.StatusFail, Reason: `stopReason "end_turn"`},
	}
	known.Apply(results)
	rep := check.Report{Role: check.RoleAgent, Peer: check.Peer{Name: "some-agent", Version: "1.2.0"}, Registered: 2, Results: results}
	rep.Judge()
	_ = check.WriteTable(os.Stdout, rep)
	// Output:
	// agent: some-agent 1.2.0
	//
	// ID                  TIER       RESULT        REASON
	// initialize.version  mandatory  pass
	// prompt.cancel       mandatory  fail (known)  stopReason "end_turn"
	//
	// 2 checks: 1 pass, 1 fail (1 known), 0 skip, 0 needs a working model, 0 needs a credential, 0 fixed since the baseline; 2 of 2 mandatory graded — OK (some-agent 1.2.0)
}

// A mandatory check that cannot apply to how the peer is reached (served
// at a URL: no process) is skipped without leaving the run INCOMPLETE,
// while one skipped for any other reason still does.
func TestJudge_InapplicableMandatoryIsNotMissing(t *testing.T) {
	rs := []check.Result{
		{ID: "initialize.version", Tier: check.TierMandatory, Status: check.StatusPass},
		{ID: "process.stdin-close", Tier: check.TierMandatory, Status: check.StatusSkip, Inapplicable: true},
	}
	assert.Equal(t, check.VerdictOK, check.Judge(rs))
	assert.Equal(t, check.Coverage{Total: 1, Graded: 1}, check.CoverageOf(rs, check.TierMandatory))

	rs[1].Inapplicable = false
	assert.Equal(t, check.VerdictIncomplete, check.Judge(rs))
	assert.Equal(t, 2, check.CoverageOf(rs, check.TierMandatory).Total)
}
