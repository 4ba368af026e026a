package codex

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"acpkit.dev/adapter/internal/measure"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The fixture is what codex-acp 2.6.0 (codex 0.166.0) wrote against the
// fake Responses API (acpkit.dev/internal/fakemodel) in one CODEX_HOME:
// session A ran a plain turn and a turn with a shell call in one process,
// session B one turn in another, and a third process continued A
// (session/load) for one more turn, appending to A's rollout. Strings over
// 160 characters are cut; everything else is as written.
const (
	fixtureHome = "testdata/home"
	sessionA    = "01a234e4-ff92-7611-8a49-86efd44ab9e4"
	sessionB    = "01a234e5-37d9-7212-835e-f8e785a04ef1"
	model       = "gpt-5.5"
	rolloutDir  = "sessions/2026/12/02"
)

// A's calls as the fake reported them (input with cached among it, output
// with reasoning among it): 100 (40 cached)/20, then 200 (50)/30 and 210
// (60)/31, and after the continuation 400 (300)/40. The title call is in
// no rollout.
var (
	turn1A = measure.Usage{Input: 100, Output: 20, Total: 120, CacheRead: 40}
	usageA = measure.Usage{Input: 910, Output: 121, Total: 1031, CacheRead: 450}
	usageB = measure.Usage{Input: 1000, Output: 100, Total: 1100}
)

// home copies the fixture into a CODEX_HOME of its own.
func home(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(fixtureHome)))
	return dir
}

// rolloutOf is session id's rollout under home.
func rolloutOf(t *testing.T, home, id string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(home, rolloutDir, "rollout-*-"+id+".jsonl"))
	require.NoError(t, err)
	require.Len(t, m, 1)
	return m[0]
}

// fakeLaunch is codex-acp run with CODEX_HOME=home on its command line.
func fakeLaunch(home string) measure.Launch {
	return measure.Launch{Program: "/usr/bin/env", Args: []string{"CODEX_HOME=" + home, "codex-acp"}}
}

// claimed is a source that claimed fakeLaunch(home), with a quick poll.
func claimed(t *testing.T, home string) *Source {
	t.Helper()
	s := New()
	s.PollEvery, s.PollFor = time.Millisecond, 50*time.Millisecond
	ok, err := s.Claim(fakeLaunch(home))
	require.NoError(t, err)
	require.True(t, ok)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// lines splits a file into its lines, each with its newline.
func lines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

func write(t *testing.T, path string, parts ...[]byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, bytes.Join(parts, nil), 0o600))
}

func appendTo(t *testing.T, path string, parts ...[]byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = f.Write(bytes.Join(parts, nil))
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// openedBeforeTheRollout is session A opened before codex created its
// rollout (as with a new session, whose rollout comes with the first
// prompt): the CODEX_HOME, the rollout's path, the lines the fixture has
// for it, and the source.
func openedBeforeTheRollout(t *testing.T) (string, string, [][]byte, *Source) {
	t.Helper()
	h := home(t)
	path := rolloutOf(t, h, sessionA)
	all := lines(t, path)
	require.NoError(t, os.Remove(path))
	s := claimed(t, h)
	require.NoError(t, s.Open(sessionA))
	return h, path, all, s
}

func TestMS16_CodexFigureIsTheThreadsTotalSinceOpen(t *testing.T) {
	h, path, all, s := openedBeforeTheRollout(t)

	write(t, path, all[:14]...) // created with the first prompt: turn 1
	f, ok := s.Drain(context.Background(), 80)
	require.True(t, ok)
	assert.Equal(t, turn1A, f.Usage)
	assert.Equal(t, model, f.Model, "the turn_context's model")
	assert.Equal(t, measure.GradeAccounted, f.Grade, "basis 100-40+20 covers codex-acp's bound 60+20")
	assert.Equal(t, "rollout", f.Origin)

	appendTo(t, path, all[14:]...) // turn 2 and the continued turn
	f, ok = s.Drain(context.Background(), 100)
	require.True(t, ok)
	assert.Equal(t, usageA, f.Usage, "run-cumulative")

	b := claimed(t, h)
	require.NoError(t, b.Open(sessionB))
	_, ok = b.Drain(context.Background(), 0)
	assert.False(t, ok, "B's rollout was there at Open: its total is the base")
}

func TestMS16_CodexContinuedThreadsHistoryIsTheBase(t *testing.T) {
	h := home(t)
	path := rolloutOf(t, h, sessionA)
	all := lines(t, path)
	write(t, path, all[:31]...) // the first process's part
	s := claimed(t, h)
	require.NoError(t, s.Open(sessionA)) // session/load
	appendTo(t, path, all[31:]...)
	f, ok := s.Drain(context.Background(), 140)
	require.True(t, ok)
	assert.Equal(t, measure.Usage{Input: 400, Output: 40, Total: 440, CacheRead: 300}, f.Usage, "only what the continued turn spent")
	assert.Equal(t, measure.GradeAccounted, f.Grade)
}

func TestMS17_CodexConcurrentSessionsReadOnlyTheirOwnRollout(t *testing.T) {
	h := home(t)
	pathA, pathB := rolloutOf(t, h, sessionA), rolloutOf(t, h, sessionB)
	linesA, linesB := lines(t, pathA), lines(t, pathB)
	require.NoError(t, os.Remove(pathA))
	require.NoError(t, os.Remove(pathB))
	a, b := claimed(t, h), claimed(t, h)
	require.NoError(t, a.Open(sessionA))
	require.NoError(t, b.Open(sessionB))
	write(t, pathB, linesB...) // B's is the newer file
	write(t, pathA, linesA...)
	fa, ok := a.Drain(context.Background(), 1)
	require.True(t, ok)
	fb, ok := b.Drain(context.Background(), 1)
	require.True(t, ok)
	assert.Equal(t, usageA, fa.Usage)
	assert.Equal(t, usageB, fb.Usage)
}

func TestMS16_CodexHalfWrittenTokenCountIsReadWholeLater(t *testing.T) {
	_, path, all, s := openedBeforeTheRollout(t)
	half := len(all[12]) / 2 // inside turn 1's token_count
	write(t, path, append(all[:12:12], all[12][:half])...)
	_, ok := s.Drain(context.Background(), 80)
	assert.False(t, ok, "nothing whole yet")
	appendTo(t, path, all[12][half:])
	f, ok := s.Drain(context.Background(), 80)
	require.True(t, ok)
	assert.Equal(t, turn1A, f.Usage)
	assert.Equal(t, measure.GradePartial, f.Grade, "basis 80 against this turn's 80 and the 80 the first drain carried")
}

func TestMS16_CodexEventsWrittenTwiceOrRereadCountOnce(t *testing.T) {
	_, path, all, s := openedBeforeTheRollout(t)
	write(t, path, all[:14]...)
	appendTo(t, path, all[12]) // the same token_count again, as on a rate-limit update
	f, ok := s.Drain(context.Background(), 80)
	require.True(t, ok)
	assert.Equal(t, turn1A, f.Usage)

	next := path + ".new"
	write(t, next, all[:14]...)
	require.NoError(t, os.Rename(next, path)) // rotated: read again from its start
	_, ok = s.Drain(context.Background(), 10)
	assert.False(t, ok, "nothing new was spent")
	assert.Equal(t, turn1A, s.rollouts.Count().Usage)
}

func TestMS16_CodexTokenCountCountsOnlyWithEveryCounter(t *testing.T) {
	for name, raw := range map[string]string{
		"no cached input":   `{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1,"output_tokens":2}}}}`,
		"no output":         `{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1,"cached_input_tokens":0}}}}`,
		"info null":         `{"type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{}}}`,
		"no total":          `{"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":2}}}}`,
		"a negative count":  `{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":-1,"cached_input_tokens":0,"output_tokens":2}}}}`,
		"a string count":    `{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":"1","cached_input_tokens":0,"output_tokens":2}}}}`,
		"a response item":   `{"type":"response_item","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":2}}}}`,
		"the usage record":  `{"type":"token_usage_record","payload":{"usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":2}}}`,
		"payload not a map": `{"type":"event_msg","payload":"token_count"}`,
	} {
		e, ok := decodeLine([]byte(raw))
		assert.False(t, ok && e.ok, name)
	}
	e, ok := decodeLine([]byte(`{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","new":true,"info":{"total_token_usage":{"input_tokens":5,"cached_input_tokens":1,"output_tokens":2,"future_tokens":9}}}}`))
	require.True(t, ok && e.ok, "unknown members are no reason to skip an event")
	assert.Equal(t, total{5, 1, 2}, e.total)
}

func TestMS17_CodexRolloutNamingAnotherThreadIsNotRead(t *testing.T) {
	h := home(t)
	pathA := rolloutOf(t, h, sessionA)
	s := claimed(t, h)
	require.NoError(t, os.Remove(pathA))
	require.NoError(t, s.Open(sessionA))
	// A file under A's name whose session_meta names B.
	write(t, pathA, lines(t, rolloutOf(t, h, sessionB))...)
	_, ok := s.Drain(context.Background(), 10)
	assert.False(t, ok)
}

func TestMS2_CodexClaimsLocalLaunchesNamingIt(t *testing.T) {
	for cmd, want := range map[string]bool{
		"codex-acp":                                true,
		"/usr/bin/env CODEX_HOME=/c codex-acp":     true,
		"npx @agentclientprotocol/codex-acp@2.6.0": true,
		"codex":            false,
		"codex exec":       false,
		"claude-agent-acp": false,
		"run-agent.sh":     false,
	} {
		tok := strings.Fields(cmd)
		ok, err := New().Claim(measure.Launch{Program: tok[0], Args: tok[1:]})
		require.NoError(t, err)
		assert.Equal(t, want, ok, cmd)
	}
	ok, _ := New().Claim(measure.Launch{Program: "codex-acp", Remote: true})
	assert.False(t, ok, "RS-7: never over SSH")
	ok, _ = New().Claim(measure.Launch{Program: "run-agent.sh", RuntimeName: RuntimeName})
	assert.True(t, ok, "RS-4: a relaunch offer for the name it recognises")
	assert.Empty(t, New().Env(), "MS-17: nothing armed")
}

func TestMS3_CodexRecognisesItsHandshakeNameOnly(t *testing.T) {
	s := New()
	assert.True(t, s.Recognize("@agentclientprotocol/codex-acp"))
	for _, n := range []string{"", "codex-acp", "codex", "@zed-industries/codex-acp", "@agentclientprotocol/claude-agent-acp"} {
		assert.False(t, s.Recognize(n), n)
	}
}

func TestMS17_CodexReadsWhereTheRuntimeWrites(t *testing.T) {
	userHome := t.TempDir()
	t.Setenv("HOME", userHome)
	t.Setenv("CODEX_HOME", "")
	require.NoError(t, os.CopyFS(filepath.Join(userHome, ".codex"), os.DirFS(fixtureHome)))
	s := New()
	_, _ = s.Claim(measure.Launch{Program: "codex-acp"})
	require.NoError(t, s.Open(sessionA))
	assert.Equal(t, filepath.Join(userHome, ".codex"), s.rollouts.home, "no CODEX_HOME: $HOME/.codex")
	assert.Len(t, s.rollouts.files, 1)

	elsewhere := home(t)
	t.Setenv("CODEX_HOME", elsewhere)
	s = New()
	_, _ = s.Claim(measure.Launch{Program: "codex-acp"})
	require.NoError(t, s.Open(sessionA))
	assert.Equal(t, elsewhere, s.rollouts.home)
}

func TestMS4_CodexOpenRefusesAnIDThatCannotNameAFile(t *testing.T) {
	for _, id := range []string{"", ".", "..", "../x", "a/b", `a\b`, "a*", "a?b", "[x]"} {
		s := claimed(t, t.TempDir())
		assert.ErrorIs(t, s.Open(id), ErrUnkeyable, "%q", id)
	}
	assert.Error(t, New().Open(sessionA), "no claim, nothing to open")
}

func TestRS8_CodexCloseIsIdempotentAndSafeUnclaimed(t *testing.T) {
	assert.NoError(t, New().Close())
	s := claimed(t, home(t))
	require.NoError(t, s.Open(sessionA))
	assert.NoError(t, s.Close())
	assert.NoError(t, s.Close())
	_, ok := s.Drain(context.Background(), 10)
	assert.False(t, ok)
}

func TestMS16_CodexDrainEndsWhenItsContextDoes(t *testing.T) {
	s := claimed(t, home(t))
	s.PollFor = time.Hour
	require.NoError(t, s.Open(sessionA))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, ok := s.Drain(ctx, 10)
	assert.False(t, ok)
}
