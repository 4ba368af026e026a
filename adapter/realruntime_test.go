//go:build linux

package adapter

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/internal/fakemodel"
	"acpkit.dev/internal/realruntime"
)

// The real runtimes pinned in conformance/runtimes, doing real turns
// against a fake model API on 127.0.0.1 (internal/fakemodel): what the
// adapter meets in production, minus the network.

// realSession is one real runtime started through the adapter.
type realSession struct {
	h    *harness
	rt   realruntime.Runtime
	fake *fakemodel.Server
	s    Session
}

// realParams are the start parameters of rt in h's workspace.
func realParams(h *harness, command string) StartParams {
	return StartParams{
		WorkspacePath: h.dir,
		Agent:         AgentConfig{Kind: KindName, Command: command, ReadTimeoutMS: 30000, StopGraceMS: 3000},
	}
}

// startReal starts kind against a fake answering with script; the session
// is stopped, and the runtime's whole tree shown gone, at cleanup.
func startReal(t *testing.T, kind realruntime.Kind, script fakemodel.Script) *realSession {
	t.Helper()
	fake := fakemodel.Start(t, script)
	rt := realruntime.Start(t, kind, fake)
	h := newHarness(t)
	r := &realSession{h: h, rt: rt, fake: fake}
	t.Cleanup(func() { rt.AssertGone(t, 5*time.Second) })
	r.s = h.startWith(realParams(h, rt.Command()))
	return r
}

// eachRuntime runs test once per pinned runtime.
func eachRuntime(t *testing.T, test func(t *testing.T, kind realruntime.Kind)) {
	for _, kind := range realruntime.Kinds {
		t.Run(string(kind), func(t *testing.T) { test(t, kind) })
	}
}

const streamedText = "Hello from the fake model, in a handful of streamed chunks."

func TestEV3_RealRuntime_StreamedTextTurn(t *testing.T) {
	eachRuntime(t, func(t *testing.T, kind realruntime.Kind) {
		r := startReal(t, kind, fakemodel.Text(streamedText))
		res, err, ev := r.h.turn(r.s, "Say hello.")
		tree := r.rt.Survivors()
		t.Logf("%s runs as %d processes", kind, len(tree))
		assert.Greater(t, len(tree), 1, "the runtime's tree (a launcher and what it starts) is found, so AssertGone sees all of it")
		require.NoError(t, err)
		assert.Equal(t, EventTurnCompleted, res.Outcome)
		assert.Equal(t, streamedText, ev.lastText("Hello"), "EV-4: the chunks accumulate into one message")
		empty := 0
		for _, m := range ev.messages(EventNotification) {
			if m == "" {
				empty++
			}
		}
		assert.Greater(t, empty, 1, "EV-3: one empty notification per streamed chunk")
		assert.True(t, r.fake.ModelRequestContains("Say hello."), "the prompt reached the model")
		assert.Zero(t, r.fake.Overflow())
	})
}

// DI-10 against the real runtimes: claude-agent-acp carries on after the
// refused write (end_turn, completed); codex-acp stops with cancelled,
// which needs a person.
func TestDI10_RealRuntime_RefusedWrite(t *testing.T) {
	eachRuntime(t, func(t *testing.T, kind realruntime.Kind) {
		h := newHarness(t)
		target := filepath.Join(h.dir, "made-by-model.txt")
		fake := fakemodel.Start(t, realruntime.WriteScript(kind, target))
		rt := realruntime.Start(t, kind, fake)
		t.Cleanup(func() { rt.AssertGone(t, 5*time.Second) })
		s := h.startWith(realParams(h, rt.Command()))

		res, err, ev := h.turn(s, "Create made-by-model.txt.")
		assert.Contains(t, ev.texts(), "refused a permission request because this run is unattended and no one can approve it", "PM-1")
		assert.NoFileExists(t, target, "the refused write never ran")
		switch kind {
		case realruntime.ClaudeAgentACP:
			require.NoError(t, err)
			assert.Equal(t, EventTurnCompleted, res.Outcome)
			assert.True(t, slices.ContainsFunc(fake.ModelRequests(), fakemodel.Request.HasToolResult), "claude told the model the tool was refused")
		case realruntime.CodexACP:
			assert.Equal(t, KindTurnInputRequired, KindOf(err))
			assert.Equal(t, EventTurnInputRequired, res.Outcome)
			assert.Equal(t, "agent asked for a decision only a person can make: a permission this unattended run refused", res.Message)
			assert.Len(t, h.log.find(logHumanInput), 1)
		}
	})
}

func TestTU4_RealRuntime_TwoTurnsOneProcess(t *testing.T) {
	eachRuntime(t, func(t *testing.T, kind realruntime.Kind) {
		r := startReal(t, kind, fakemodel.Text("Noted."))
		_, err, first := r.h.turn(r.s, "The first prompt mentions a lighthouse.")
		require.NoError(t, err)
		res, err, second := r.h.turn(r.s, "The second prompt asks what the first one mentioned.")
		require.NoError(t, err)
		assert.Equal(t, EventTurnCompleted, res.Outcome)
		for _, ev := range []*events{first, second} {
			require.NotEmpty(t, ev.list())
			assert.Equal(t, EventSessionStarted, ev.list()[0].Type, "TU-4: every turn")
			assert.Equal(t, r.s.AgentPID, ev.list()[0].AgentPID, "one process")
		}
		assert.True(t, r.fake.ModelRequestContains("second prompt", "lighthouse"), "the second turn carried the first one's conversation")
	})
}

func TestSR5_RealRuntime_ResumeInNewProcess(t *testing.T) {
	eachRuntime(t, func(t *testing.T, kind realruntime.Kind) {
		r := startReal(t, kind, fakemodel.Text("I will remember it."))
		_, err, _ := r.h.turn(r.s, "Remember the word pineapple.")
		require.NoError(t, err)
		r.h.stop(r.s)

		// A new adapter, like a new orchestrator process: no SR-9 hold.
		h2 := newHarness(t)
		h2.dir = r.h.dir
		p := realParams(h2, r.rt.Command())
		p.ResumeSessionID = r.s.ID
		s2 := h2.startWith(p)
		assert.Equal(t, r.s.ID, s2.ID, "the saved session continued")
		assert.NotEqual(t, r.s.AgentPID, s2.AgentPID, "in a new process")
		_, err, _ = h2.turn(s2, "Which word did I ask you to remember?")
		require.NoError(t, err)
		assert.True(t, r.fake.ModelRequestContains("Which word", "pineapple"), "the resumed conversation reached the model")
	})
}

func TestTU7_RealRuntime_CancelMidStream(t *testing.T) {
	eachRuntime(t, func(t *testing.T, kind realruntime.Kind) {
		h := newHarness(t)
		fake := fakemodel.Start(t, func(r fakemodel.Request) fakemodel.Reply {
			if !r.OffersTools() {
				return fakemodel.Reply{Text: "A slow session"}
			}
			return fakemodel.Reply{Text: "Streaming slowly:", Slow: true}
		})
		rt := realruntime.Start(t, kind, fake)
		t.Cleanup(func() { rt.AssertGone(t, 5*time.Second) })
		wire := filepath.Join(t.TempDir(), "wire.ndjson")
		s := h.startWith(realParams(h, rt.Tapped(os.Args[0], wire)))

		// Cancelled at the first streamed chunk: the model's slow stream is
		// under way (it lasts 30s unless cancelled).
		ctx, cancel, _, onEvent := cancelOnChunk()
		defer cancel()
		res, err := h.a.RunTurn(ctx, s, TurnParams{Prompt: "Stream for a long time.", OnEvent: onEvent})
		assert.Equal(t, KindTurnCancelled, KindOf(err))
		assert.Equal(t, EventTurnCancelled, res.Outcome)
		h.stop(s)
		assert.Equal(t, 1, realruntime.CountMethod(t, wire, "session/cancel"), "TU-7: exactly one session/cancel")
	})
}
