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

func TestWriteTable_RowsSummaryAndTranscripts(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, check.WriteTable(&b, check.NewReport(nil, check.Agent{Name: "gemini-cli", Version: "0.9.0"}, sampleResults())))
	out := b.String()
	assert.Regexp(t, `(?m)^prompt\.cancel\s+mandatory\s+fail\s+cancelled turn ended`, out)
	assert.Regexp(t, `(?m)^session\.load\s+capability\s+skip\s+agent does not advertise`, out)
	assert.True(t, strings.HasPrefix(out, "agent: gemini-cli 0.9.0\n"), "the table names the agent graded")
	assert.Contains(t, out, "4 checks: 1 pass, 2 fail (0 known), 1 skip, 0 needs a working model, 0 needs a credential, 0 fixed since the baseline — FAILED (gemini-cli 0.9.0)")
	assert.Contains(t, out, "--- prompt.cancel (fail)")
	assert.Contains(t, out, `     1.5ms send   {"method":"session/cancel"}`)
}

func TestWriteJSON_RoundTrips(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, check.WriteJSON(&b, check.NewReport([]string{"agent", "--acp"}, check.Agent{Name: "gemini-cli", Version: "0.9.0"}, sampleResults())))
	var rep check.Report
	require.NoError(t, json.Unmarshal(b.Bytes(), &rep))
	assert.False(t, rep.OK)
	assert.Equal(t, []string{"agent", "--acp"}, rep.Command)
	assert.Equal(t, check.Agent{Name: "gemini-cli", Version: "0.9.0"}, rep.Agent)
	assert.Equal(t, 2, rep.Summary.Fail)
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

func TestParseBaseline_RefusesUnknownAndDuplicateIDs(t *testing.T) {
	_, err := check.ParseBaseline(strings.NewReader("prompt.cancle typo\n"), check.Standard())
	require.ErrorIs(t, err, check.ErrBaseline)
	assert.Contains(t, err.Error(), "line 1")
	_, err = check.ParseBaseline(strings.NewReader("prompt.cancel a\nprompt.cancel b\n"), check.Standard())
	require.ErrorIs(t, err, check.ErrBaseline)
}

// FuzzParseBaseline: any file parses or fails with ErrBaseline.
func FuzzParseBaseline(f *testing.F) {
	f.Add("# c\nprompt.cancel note\n\n")
	f.Add("initialize.version\ninitialize.version\n")
	f.Add("nope")
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
	_ = check.WriteTable(os.Stdout, check.NewReport(nil, check.Agent{Name: "some-agent", Version: "1.2.0"}, results))
	// Output:
	// agent: some-agent 1.2.0
	//
	// ID                  TIER       RESULT        REASON
	// initialize.version  mandatory  pass
	// prompt.cancel       mandatory  fail (known)  stopReason "end_turn"
	//
	// 2 checks: 1 pass, 1 fail (1 known), 0 skip, 0 needs a working model, 0 needs a credential, 0 fixed since the baseline — OK (some-agent 1.2.0)
}
