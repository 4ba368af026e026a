package claude

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

// The fixture is what claude-agent-acp 0.101.0 wrote against the fake
// Anthropic API (acpkit.dev/internal/fakemodel) for two sessions run one
// after the other in one workspace: A (a plain turn, then a turn whose
// reply of text and an Agent tool call started a sub-agent) and B (one
// turn). Strings over 160 characters are cut; the workspace's directory is
// renamed -tmp-work; everything else is as written.
const (
	fixtureProjects = "testdata/config/projects"
	sessionA        = "07e96c48-4e53-4f03-af1c-972f0dbdb0c8"
	sessionB        = "bc336fac-8bcc-420e-a7da-182dc95be582"
	model           = "claude-opus-5-5"
)

// The fake's usage per call of A, as the API reported it (input_tokens,
// output_tokens, cache_read_input_tokens, cache_creation_input_tokens):
// the first turn's reply 100/20/40/8; the second turn's tool-call reply
// 200/30/50/0 (written as two records, text and tool_use), its sub-agent's
// reply 300/33/3/1 and its last reply 210/31/60/2. The title calls (7/3
// each) are in no record.
var (
	usageA = measure.Usage{Input: 810 + 11 + 153, Output: 114, Total: 810 + 11 + 153 + 114, CacheRead: 153}
	usageB = measure.Usage{Input: 1000, Output: 100, Total: 1100}
)

// config copies the fixture into a configuration directory of its own,
// where a test may write.
func config(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(dir, "projects"), os.DirFS(fixtureProjects)))
	return dir
}

// transcript is session id's file under config.
func transcript(config, id string) string {
	return filepath.Join(config, "projects", "-tmp-work", id+".jsonl")
}

// claimed is a source that claimed claude-agent-acp run with
// CLAUDE_CONFIG_DIR=config on its command line, with a quick poll.
func claimed(t *testing.T, config string) *Source {
	t.Helper()
	s := New()
	s.PollEvery, s.PollFor = time.Millisecond, 50*time.Millisecond
	ok, err := s.Claim(fakeLaunch(config))
	require.NoError(t, err)
	require.True(t, ok)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// fakeLaunch is claude-agent-acp run with CLAUDE_CONFIG_DIR=config on its
// command line.
func fakeLaunch(config string) measure.Launch {
	return measure.Launch{Program: "env", Args: []string{"CLAUDE_CONFIG_DIR=" + config, "claude-agent-acp"}}
}

// moveAside hides the fixture's projects until the test puts them back:
// files the runtime has not created yet.
func moveAside(t *testing.T, config string) (restore func()) {
	t.Helper()
	aside := filepath.Join(t.TempDir(), "aside")
	require.NoError(t, os.Rename(filepath.Join(config, "projects"), aside))
	return func() { require.NoError(t, os.Rename(aside, filepath.Join(config, "projects"))) }
}

func TestMS16_ClaudeCountsTheSessionsRepliesOnceWithItsSubAgents(t *testing.T) {
	cfg := config(t)
	restore := moveAside(t, cfg)
	a := claimed(t, cfg)
	require.NoError(t, a.Open(sessionA))
	restore() // created with the first prompt, after session/new
	f, ok := a.Drain(context.Background(), 100)
	require.True(t, ok)
	assert.Equal(t, usageA, f.Usage, "each message once, the sub-agent's too; cache reads and writes are input")
	assert.Equal(t, model, f.Model)
	assert.Equal(t, measure.GradeAccounted, f.Grade)
	assert.Equal(t, "transcript", f.Origin)
	assert.Equal(t, 4, a.transcripts.Count().Records, "four messages in five records")

	b := claimed(t, cfg)
	require.NoError(t, b.Open(sessionB))
	f, ok = b.Drain(context.Background(), 0)
	assert.False(t, ok, "B's file was there at Open: inherited, nothing new")
	appendLine(t, transcript(cfg, sessionB), line(t, sessionB, "msg_new_b", `"input_tokens":1000,"output_tokens":100,"cache_read_input_tokens":0,"cache_creation_input_tokens":0`))
	f, ok = b.Drain(context.Background(), 1100)
	require.True(t, ok)
	assert.Equal(t, usageB, f.Usage, "MS-17: one session in the workspace never counts the other's replies")
}

// line is an assistant record of id with the usage members given, shaped
// like the fixture's.
func line(t *testing.T, session, id, usage string) string {
	t.Helper()
	return `{"parentUuid":"p","isSidechain":false,"message":{"model":"` + model + `","id":"` + id + `","type":"message","role":"assistant","content":[{"type":"text","text":"x"}],"stop_reason":"end_turn","usage":{` + usage + `,"output_tokens_details":{"thinking_tokens":0},"service_tier":"standard"}},"type":"assistant","uuid":"u","sessionId":"` + session + `"}`
}

func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(line + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func TestMS16_ClaudeContinuedSessionsHistoryIsInherited(t *testing.T) {
	cfg := config(t)
	s := claimed(t, cfg)
	require.NoError(t, s.Open(sessionA)) // session/load: the file is there
	_, ok := s.Drain(context.Background(), 10)
	assert.False(t, ok, "nothing of the history is charged to this run")
	appendLine(t, transcript(cfg, sessionA), line(t, sessionA, "msg_fake_2", `"input_tokens":100,"output_tokens":20,"cache_read_input_tokens":40,"cache_creation_input_tokens":8`))
	_, ok = s.Drain(context.Background(), 10)
	assert.False(t, ok, "an inherited message written again is still inherited")
	appendLine(t, transcript(cfg, sessionA), line(t, sessionA, "msg_after", `"input_tokens":5,"output_tokens":6,"cache_read_input_tokens":7,"cache_creation_input_tokens":8`))
	f, ok := s.Drain(context.Background(), 11)
	require.True(t, ok)
	assert.Equal(t, measure.Usage{Input: 20, Output: 6, Total: 26, CacheRead: 7}, f.Usage)
}

func TestMS16_ClaudeHalfWrittenLastRecordIsCountedWholeLater(t *testing.T) {
	cfg := config(t)
	path := transcript(cfg, sessionA)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	restore := moveAside(t, cfg)
	s := claimed(t, cfg)
	require.NoError(t, s.Open(sessionA))
	restore()
	last := bytes.LastIndex(data, []byte(`"id":"msg_fake_6"`))
	require.Positive(t, last)
	require.NoError(t, os.WriteFile(path, data[:last], 0o600))

	f, ok := s.Drain(context.Background(), 1)
	require.True(t, ok)
	assert.Equal(t, usageA.Output-31, f.Usage.Output, "the half-written reply is not counted yet")
	appendFile(t, path, data[last:])
	f, ok = s.Drain(context.Background(), 241)
	require.True(t, ok)
	assert.Equal(t, usageA, f.Usage, "counted once, whole")
	assert.Equal(t, measure.GradeAccounted, f.Grade)
}

func appendFile(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func TestMS16_ClaudeRotatedTranscriptIsNotCountedTwice(t *testing.T) {
	cfg := config(t)
	restore := moveAside(t, cfg)
	s := claimed(t, cfg)
	require.NoError(t, s.Open(sessionA))
	restore()
	f, ok := s.Drain(context.Background(), 1)
	require.True(t, ok)
	require.Equal(t, usageA, f.Usage)

	path := transcript(cfg, sessionA)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	next := path + ".new"
	require.NoError(t, os.WriteFile(next, data, 0o600))
	require.NoError(t, os.Rename(next, path))
	appendLine(t, path, line(t, sessionA, "msg_after", `"input_tokens":1,"output_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":0`))
	f, ok = s.Drain(context.Background(), 2)
	require.True(t, ok)
	assert.Equal(t, usageA.Input+1, f.Usage.Input, "the new file is read from its start; what was counted counts once")
	assert.Equal(t, measure.GradeAccounted, f.Grade)
}

func TestMS16_ClaudeRecordCountsOnlyWithEveryCounter(t *testing.T) {
	for name, raw := range map[string]string{
		"no cache read":       line(t, sessionA, "m1", `"input_tokens":5,"output_tokens":5,"cache_creation_input_tokens":0`),
		"no cache creation":   line(t, sessionA, "m1", `"input_tokens":5,"output_tokens":5,"cache_read_input_tokens":0`),
		"no output":           line(t, sessionA, "m1", `"input_tokens":5,"cache_read_input_tokens":0,"cache_creation_input_tokens":0`),
		"a string counter":    line(t, sessionA, "m1", `"input_tokens":"5","output_tokens":5,"cache_read_input_tokens":0,"cache_creation_input_tokens":0`),
		"a negative counter":  line(t, sessionA, "m1", `"input_tokens":-5,"output_tokens":5,"cache_read_input_tokens":0,"cache_creation_input_tokens":0`),
		"another session":     line(t, sessionB, "m1", `"input_tokens":5,"output_tokens":5,"cache_read_input_tokens":0,"cache_creation_input_tokens":0`),
		"no message id":       line(t, sessionA, "", `"input_tokens":5,"output_tokens":5,"cache_read_input_tokens":0,"cache_creation_input_tokens":0`),
		"a synthetic message": strings.Replace(line(t, sessionA, "m1", `"input_tokens":5,"output_tokens":5,"cache_read_input_tokens":0,"cache_creation_input_tokens":0`), model, syntheticModel, 1),
		"a user record":       strings.Replace(line(t, sessionA, "m1", `"input_tokens":5,"output_tokens":5,"cache_read_input_tokens":0,"cache_creation_input_tokens":0`), `"type":"assistant"`, `"type":"user"`, 1),
	} {
		_, ok := decodeReply([]byte(raw), sessionA)
		assert.False(t, ok, name)
	}
	r, ok := decodeReply([]byte(`{"type":"assistant","sessionId":"s","future":{"x":[1]},"message":{"id":"m","usage":{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":3,"cache_creation_input_tokens":4,"new_counter":9}}}`), "s")
	require.True(t, ok, "unknown members are no reason to skip a record")
	assert.Equal(t, usage{1, 2, 4, 3}, r.u)
}

func TestMS16_ClaudeStreamedMessageCountsItsLargestCounters(t *testing.T) {
	var tl tally
	tl.add(replyOf("m", usage{10, 1, 0, 5}, false), nil)
	tl.add(replyOf("m", usage{10, 40, 0, 5}, false), nil)
	tl.add(replyOf("m", usage{10, 40, 0, 5}, true), nil)
	c := tl.count()
	assert.Equal(t, measure.Usage{Input: 15, Output: 40, Total: 55, CacheRead: 5}, c.Usage)
	assert.Equal(t, 1, c.Records)
	assert.Equal(t, 1, c.NonZero)
	tl.add(replyOf("z", usage{}, false), nil)
	tl.add(replyOf("z", usage{0, 3, 0, 0}, false), nil)
	assert.Equal(t, 2, tl.count().NonZero, "a message that turns non-zero counts as such once")
}

func replyOf(id string, u usage, sidechain bool) reply {
	return reply{id: id, u: u, model: map[bool]string{true: "sub", false: "main"}[sidechain], sidechain: sidechain}
}

func TestMS14_ClaudeModelOfRecordIsTheConversationsOwn(t *testing.T) {
	var tl tally
	tl.add(replyOf("a", usage{1, 1, 0, 0}, false), nil)
	tl.add(replyOf("b", usage{1, 1, 0, 0}, true), nil)
	assert.Equal(t, "main", tl.count().Model, "a later sub-agent reply does not name the model")
	var subOnly tally
	subOnly.add(replyOf("b", usage{1, 1, 0, 0}, true), nil)
	assert.Equal(t, "sub", subOnly.count().Model)
}

func TestMS2_ClaudeClaimsLocalLaunchesNamingIt(t *testing.T) {
	for cmd, want := range map[string]bool{
		"claude-agent-acp":                          true,
		"/usr/bin/env HOME=/h claude-agent-acp":     true,
		"npx @agentclientprotocol/claude-agent-acp": true,
		"claude":       false,
		"codex-acp":    false,
		"run-agent.sh": false,
	} {
		tok := strings.Fields(cmd)
		ok, err := New().Claim(measure.Launch{Program: tok[0], Args: tok[1:]})
		require.NoError(t, err)
		assert.Equal(t, want, ok, cmd)
	}
	ok, _ := New().Claim(measure.Launch{Program: "claude-agent-acp", Remote: true})
	assert.False(t, ok, "RS-7: never over SSH")
	ok, _ = New().Claim(measure.Launch{Program: "run-agent.sh", RuntimeName: RuntimeName})
	assert.True(t, ok, "RS-4: a relaunch offer for the name it recognises")
	ok, _ = New().Claim(measure.Launch{Program: "claude-agent-acp", RuntimeName: "gemini-cli"})
	assert.False(t, ok, "a relaunch offer is decided by the name")
	assert.Empty(t, New().Env(), "MS-17: nothing armed")
}

func TestMS3_ClaudeRecognisesItsHandshakeNameOnly(t *testing.T) {
	s := New()
	assert.True(t, s.Recognize("@agentclientprotocol/claude-agent-acp"))
	for _, n := range []string{"", "claude-agent-acp", "@zed-industries/claude-code-acp", "@agentclientprotocol/codex-acp", "gemini-cli"} {
		assert.False(t, s.Recognize(n), n)
	}
}

func TestMS17_ClaudeReadsWhereTheRuntimeWrites(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	require.NoError(t, os.CopyFS(filepath.Join(home, ".claude", "projects"), os.DirFS(fixtureProjects)))
	s := New()
	ok, err := s.Claim(measure.Launch{Program: "claude-agent-acp"})
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, s.Open(sessionA))
	assert.Equal(t, filepath.Join(home, ".claude"), s.transcripts.config, "no CLAUDE_CONFIG_DIR: $HOME/.claude")
	assert.Equal(t, filepath.Join(home, ".claude", "projects", "-tmp-work", sessionA+".jsonl"), s.transcripts.path)

	elsewhere := config(t)
	t.Setenv("CLAUDE_CONFIG_DIR", elsewhere)
	s = New()
	_, _ = s.Claim(measure.Launch{Program: "claude-agent-acp"})
	require.NoError(t, s.Open(sessionA))
	assert.Equal(t, elsewhere, s.transcripts.config, "CLAUDE_CONFIG_DIR, the whole configuration directory")
	assert.Equal(t, home, os.Getenv("HOME"), "nothing is changed")
}

func TestMS4_ClaudeOpenRefusesAnIDThatCannotNameAFile(t *testing.T) {
	for _, id := range []string{"", ".", "..", "../x", `a\b`, "a/b", "a\x00b", "a*", "[x]"} {
		s := claimed(t, t.TempDir())
		assert.ErrorIs(t, s.Open(id), ErrUnkeyable, "%q", id)
	}
	assert.Error(t, New().Open(sessionA), "no claim, nothing to open")
}

func TestRS8_ClaudeCloseIsIdempotentAndSafeUnclaimed(t *testing.T) {
	assert.NoError(t, New().Close())
	s := claimed(t, config(t))
	require.NoError(t, s.Open(sessionA))
	assert.NoError(t, s.Close())
	assert.NoError(t, s.Close())
	_, ok := s.Drain(context.Background(), 10)
	assert.False(t, ok, "a closed source answers nothing")
	assert.Error(t, s.Open(sessionA))
}

func TestMS16_ClaudeDrainEndsWhenItsContextDoes(t *testing.T) {
	s := claimed(t, config(t))
	s.PollFor = time.Hour
	require.NoError(t, s.Open(sessionA))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, ok := s.Drain(ctx, 10)
	assert.False(t, ok)
}
