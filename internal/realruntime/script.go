//go:build linux

package realruntime

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"acpkit.dev/internal/fakemodel"
)

// The suite's prompts. Script answers each by the cue it carries, read
// from the last user message of a model request, so a later turn's
// request, which repeats the earlier prompts, is answered for its own.
const (
	// PromptRemember starts a conversation: a streamed text answer, and
	// a word a later turn (or a resumed session) asks about.
	PromptRemember = "Remember the word pineapple, and say hello."
	// PromptRecall is a later turn of the same conversation.
	PromptRecall = "Which word did the first prompt ask you to remember?"
	// PromptResumed is the first turn of a resumed session.
	PromptResumed = "After the resume: which word was it?"
	// PromptWrite makes the model ask for WritePath to be created.
	PromptWrite = "Create made-by-model.txt."
	// PromptSlow makes the model stream until the turn is cancelled.
	PromptSlow = "Stream for a long time."
	// PromptCommand makes the model ask for Runtime.ShellCommand to be run.
	PromptCommand = "Run the command."
	// Remembered is the word PromptRemember asks the model to remember.
	Remembered = "pineapple"
)

// The suite's answers.
const (
	// StreamedText answers every prompt without another cue, in a handful
	// of streamed chunks.
	StreamedText = "Hello from the fake model, in a handful of streamed chunks."
	// AfterTool answers a request that reports a tool's result.
	AfterTool = "Understood, the tool did not run."
	// SideText answers requests that offer no tools (a session title).
	SideText = "A short title"
	// SlowText starts the slow stream.
	SlowText = "Streaming slowly:"
)

// suiteLifetime bounds a suite fake's life.
const suiteLifetime = 20 * time.Minute

// WritePath is the file PromptWrite asks the runtime to create in the
// workspace work.
func WritePath(work string) string { return filepath.Join(work, "made-by-model.txt") }

// fifoPath is the fifo ShellCommand reads in the workspace work; its name
// carries the runtime's mark, so the command is found by its command line
// even without the runtime's environment (see Survivors).
func (r Runtime) fifoPath(work string) string {
	return filepath.Join(work, r.commandToken())
}

// commandToken is the name of ShellCommand's fifo.
func (r Runtime) commandToken() string { return "command-" + r.Mark + ".fifo" }

// ShellCommand is the shell command PromptCommand makes the model ask
// for: cat of the workspace's fifo. Its open blocks until CommandStarted's
// writer opens the other end, so the test knows the command is under way
// without polling; then it reads until that writer closes, at the test's
// end, so it runs as long as the test needs. The runtime lets cat run
// without asking (its settings, see Specs; claude-agent-acp, for one,
// refuses a bare sleep as a tool call).
func (r Runtime) ShellCommand(work string) string { return "cat " + r.fifoPath(work) }

// Script answers the suite's prompts for the runtime, in the workspace
// work: PromptWrite with the runtime's write tool call, PromptCommand with
// its shell tool call running ShellCommand, PromptSlow with a slow stream; a
// request reporting a tool's result with AfterTool, a request offering no
// tools with SideText, anything else with StreamedText.
func (r Runtime) Script(work string) fakemodel.Script {
	return func(req fakemodel.Request) fakemodel.Reply {
		if !req.OffersTools() {
			return fakemodel.Reply{Text: SideText}
		}
		if req.EndsWithToolResult() {
			return fakemodel.Reply{Text: AfterTool}
		}
		last := req.LastUserText()
		switch {
		case strings.Contains(last, PromptWrite):
			return fakemodel.Reply{ToolCall: r.write(WritePath(work))}
		case strings.Contains(last, PromptCommand):
			return fakemodel.Reply{ToolCall: r.command(r.ShellCommand(work))}
		case strings.Contains(last, PromptSlow):
			return fakemodel.Reply{Text: SlowText, Slow: true}
		}
		return fakemodel.Reply{Text: StreamedText}
	}
}

// StartSuite starts a fake model answering with the runtime's Script
// for the workspace work, and sets kind up against it. The fake lives as
// long as the test (at most suiteLifetime): a runtime's session on a
// loaded machine can take minutes.
func StartSuite(t testing.TB, kind Kind, work string, opts ...Option) (Runtime, *fakemodel.Server) {
	t.Helper()
	var r Runtime
	ready := make(chan struct{}) // r is set: the script may read it
	defer close(ready)
	fake := fakemodel.Start(t, func(req fakemodel.Request) fakemodel.Reply {
		<-ready
		return r.Script(work)(req)
	}, fakemodel.Options{Lifetime: suiteLifetime})
	r = Start(t, kind, fake, opts...)
	return r, fake
}

// CommandStarted makes the fifo ShellCommand reads in work and returns a
// channel closed once the command has opened it: the runtime is then
// running the command. The fifo's writer stays open until the test ends
// (the command runs until then); it is released at cleanup if the command
// never came.
func (r Runtime) CommandStarted(t testing.TB, work string) <-chan struct{} {
	t.Helper()
	path := r.fifoPath(work)
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("realruntime: mkfifo: %v", err)
	}
	started, done := make(chan struct{}), make(chan struct{})
	var w *os.File
	go func() {
		defer close(done)
		// Blocks until a reader opens the fifo: the command, or the
		// release below.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err == nil {
			w = f
			close(started)
		}
	}()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			// Nobody opened it: open it for reading, which lets the
			// writer's open return.
			rd, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
			if err != nil {
				t.Errorf("realruntime: releasing the fifo's writer: %v", err)
				return
			}
			<-done
			_ = rd.Close()
		}
		if w != nil {
			_ = w.Close()
		}
	})
	return started
}

// AssertOffline shows that the runtime reached nothing but the fake:
// every request that asked the fake, as a proxy, for another host (the
// runtimes try npm, telemetry and their vendors' hosts) was refused, and
// is logged; and no model request came past the fake's bound.
func AssertOffline(t testing.TB, fake *fakemodel.Server) {
	t.Helper()
	hosts := map[string]int{}
	for _, r := range fake.Tunnels() {
		hosts[r.Method+" "+r.Path]++
		if r.Status != http.StatusForbidden {
			t.Errorf("realruntime: the proxy answered %s %s with %d: a tunnel went through", r.Method, r.Path, r.Status)
		}
	}
	if len(hosts) > 0 {
		t.Logf("refused tunnels (nothing is forwarded): %v", hosts)
	}
	if n := fake.Overflow(); n > 0 {
		t.Errorf("realruntime: %d model requests came past the fake's bound", n)
	}
}

// UnknownSessionID is a session id no runtime has: a random UUID (the
// shape most runtimes' ids have, so it is refused as unknown, not as
// malformed).
func UnknownSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
