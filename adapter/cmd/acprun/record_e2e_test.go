//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/internal/fakeagent"
)

// scriptedAgent is the scripted fake runtime: per prompt a stderr line (one
// not UTF-8), a thought, a plan, a tool call, two chunks of one message and
// the answer.
func scriptedAgent(a *fakeagent.Agent) {
	a.Handshake(fakeagent.InitResult(nil), "scripted-1")
	for {
		m, err := a.Read()
		if err != nil {
			return
		}
		if m.Method != "session/prompt" {
			continue
		}
		os.Stderr.WriteString("scripted: working on it\n\xff\xfe raw bytes\n")
		a.Update("scripted-1", `{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"Thinking."}}`)
		a.Update("scripted-1", `{"sessionUpdate":"plan","entries":[{"content":"Answer","priority":"high","status":"in_progress"}]}`)
		a.Update("scripted-1", `{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read a.txt","kind":"read","status":"pending","rawInput":{"path":"a.txt"}}`)
		a.Update("scripted-1", `{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"A"}}]}`)
		a.Update("scripted-1", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Scripted "},"messageId":"m1"}`)
		a.Update("scripted-1", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"answer."},"messageId":"m1"}`)
		a.Reply(m, map[string]any{"stopReason": "end_turn"})
	}
}

// recordAndReplay runs prompts against command with --record, then the
// same prompts against `acprun replay` of the transcript, and returns both
// runs' JSON lines, normalized.
func recordAndReplay(t *testing.T, command string, prompts ...string) (recorded, replayed string, file string) {
	t.Helper()
	file = filepath.Join(t.TempDir(), "session.jsonl")
	first := acprun(t, append([]string{"--json", "--record", file, "--command", command}, prompts...)...)
	require.Equal(t, 0, first.status, first.stderr)
	second := acprun(t, append([]string{"--json", "--command", filepath.Join(bin, "acprun") + " replay " + file}, prompts...)...)
	require.Equal(t, 0, second.status, second.stderr)
	return string(normalize(first.stdout)), string(normalize(second.stdout)), file
}

func TestE2E_RecordedReferenceAgentSessionReplaysToTheSameEvents(t *testing.T) {
	recorded, replayed, file := recordAndReplay(t, refagent(), "full permission", "text")
	assert.Equal(t, recorded, replayed)
	assert.Greater(t, strings.Count(recorded, "\n"), 10, "a session with many events")
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), `{"format":"acprun-transcript","version":1,`))
	for _, kind := range []string{"spawn", "send", "recv", "stderr", "exit"} {
		assert.Contains(t, string(b), `"kind":"`+kind+`"`)
	}
}

func TestE2E_RecordedScriptedRuntimeSessionReplaysToTheSameEvents(t *testing.T) {
	recorded, replayed, file := recordAndReplay(t, fakeagent.Command("scripted"), "one", "two")
	assert.Equal(t, recorded, replayed)
	assert.Contains(t, recorded, `"message":"Scripted answer."`)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"kind":"stderr","base64":`, "stderr that is not UTF-8 is kept byte for byte")
}

func TestE2E_ReplayRefusesAnOlderFormatVersion(t *testing.T) {
	file := filepath.Join(t.TempDir(), "old.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(`{"format":"acprun-transcript","version":0}`+"\n"), 0o644))
	r := acprun(t, "replay", file)
	assert.Equal(t, 2, r.status)
	assert.Contains(t, r.stderr, "the file is format version 0 and this program reads version 1 only; record it again")
}

func TestE2E_ReplayOfAClientThatGoesFurtherFailsItsTurn(t *testing.T) {
	_, _, file := recordAndReplay(t, refagent(), "text")
	r := acprun(t, "--json", "--command", filepath.Join(bin, "acprun")+" replay "+file, "text", "a turn never recorded")
	assert.Equal(t, 4, r.status, r.stderr)
	assert.Contains(t, r.stderr, "the client sent a session/prompt request after the recorded session ended")
}
