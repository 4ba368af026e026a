package adapter

import (
	"context"
	"testing"

	"acpkit.dev/adapter/internal/fakeagent"
)

func benchParams(b *testing.B, args ...string) (*Adapter, StartParams) {
	a, err := New(nil)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	return a, StartParams{
		WorkspacePath: dir,
		Agent:         AgentConfig{Kind: KindName, Command: fakeagent.Command("coop", args...)},
	}
}

// BenchmarkStartSession measures spawn, initialize and session/new of the
// scripted runtime (the stop is outside the timer).
func BenchmarkStartSession(b *testing.B) {
	a, p := benchParams(b)
	ctx := context.Background()
	for b.Loop() {
		s, err := a.StartSession(ctx, p)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = a.StopSession(ctx, s)
		b.StartTimer()
	}
}

// BenchmarkStopSession measures the teardown of a cooperative runtime: one
// that exits on the graceful signal.
func BenchmarkStopSession(b *testing.B) {
	a, p := benchParams(b)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		s, err := a.StartSession(ctx, p)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		_ = a.StopSession(ctx, s)
	}
}

// BenchmarkTurn measures one prompt round trip with a few updates.
func BenchmarkTurn(b *testing.B) {
	a, p := benchParams(b)
	ctx := context.Background()
	s, err := a.StartSession(ctx, p)
	if err != nil {
		b.Fatal(err)
	}
	defer a.StopSession(ctx, s)
	tp := TurnParams{Prompt: "chunk:m:a chunk:m:b tool:t:read tooldone:t:completed:x stop:end_turn", OnEvent: func(Event) {}}
	for b.Loop() {
		if _, err := a.RunTurn(ctx, s, tp); err != nil {
			b.Fatal(err)
		}
	}
}
