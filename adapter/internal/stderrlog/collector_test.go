package stderrlog

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"acpkit.dev/adapter/internal/contract"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a slog.Handler that keeps records for assertions.
type recorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

// lines returns "LEVEL msg line=…" per record.
func (r *recorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.recs {
		s := rec.Level.String() + " " + rec.Message
		rec.Attrs(func(a slog.Attr) bool {
			s += " " + a.Key + "=" + a.Value.String()
			return true
		})
		out = append(out, s)
	}
	return out
}

// collect runs a collector over s to completion.
func collect(t *testing.T, s string, log *slog.Logger) *Collector {
	t.Helper()
	c := Start(strings.NewReader(s), log, NewMasker(nil))
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("collector did not finish a finite stream")
	}
	require.NoError(t, c.Err())
	return c
}

func TestSS3_TailSanitisedMaskedTrimmedJoined(t *testing.T) {
	in := "  \x1b[31merror:\x1b[0m could not connect\r\n" +
		"\n" + // blank lines are not kept
		"\tAuthorization: Bearer abcdef123456  \n" +
		"key=\x1b]0;title\x07GEMINI_API_KEY=supersecretvalue\x07bell\n" +
		"last line without newline"
	c := collect(t, in, nil)
	assert.Equal(t, []string{
		"error: could not connect",
		"Authorization: Bearer ***",
		"key=GEMINI_API_KEY=***", // the BEL is stripped, so "bell" joins the value
		"last line without newline",
	}, c.Lines())
	assert.Equal(t, "error: could not connect | Authorization: Bearer *** | key=GEMINI_API_KEY=*** | last line without newline", c.Tail())
}

func TestSS3_NoStandardErrorOutput(t *testing.T) {
	assert.Equal(t, NoOutput, collect(t, "", nil).Tail())
	assert.Equal(t, NoOutput, collect(t, " \n\t\n\x1b[0m\n", nil).Tail())
}

func TestSS3_TailBoundedFromTheEnd(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 3*TailBytes; i++ {
		b.WriteString("line é ")
		b.WriteString(strings.Repeat("x", i%13))
		b.WriteString("\n")
	}
	b.WriteString("the very end\n")
	tail := collect(t, b.String(), nil).Tail()
	assert.LessOrEqual(t, len(tail), TailBytes)
	assert.Greater(t, len(tail), TailBytes-4, "cut only to a rune boundary")
	assert.True(t, strings.HasPrefix(tail, OmittedPrefix))
	assert.True(t, strings.HasSuffix(tail, " | the very end"))
	assert.True(t, utf8.ValidString(tail))

	// Exactly at the bound: no prefix.
	exact := strings.Repeat("y", TailBytes)
	assert.Equal(t, exact, collect(t, exact, nil).Tail())
	over := exact + "z"
	got := collect(t, over, nil).Tail()
	assert.Equal(t, OmittedPrefix+over[len(over)-(TailBytes-len(OmittedPrefix)):], got)
}

func TestSS3_EarlyExitReport(t *testing.T) {
	c := collect(t, "fatal: no credential\n", nil)
	f := c.EarlyExit("exit status 7")
	assert.Equal(t, contract.KindPortExit, f.Kind)
	assert.Equal(t, "the agent runtime exited before responding: exit status 7", f.Message)
	var te *TailError
	require.ErrorAs(t, f, &te)
	assert.Equal(t, "fatal: no credential", te.Tail)
	assert.Equal(t, "the agent runtime exited before responding: exit status 7: fatal: no credential", f.Error())
	assert.Equal(t, "the agent runtime exited before responding: exit status 0", EarlyExitMessage("exit status 0"))
}

func TestRelogEveryLineAtWarn(t *testing.T) {
	rec := &recorder{}
	c := collect(t, "one\ntwo token=abc\n", nil)
	c.Relog(slog.New(rec))
	assert.Equal(t, []string{
		"WARN agent stderr line=one",
		"WARN agent stderr line=two token=***",
	}, rec.lines())
}

func TestLOG21_DebugWhileDraining(t *testing.T) {
	rec := &recorder{}
	collect(t, "\x1b[2Khello\n", slog.New(rec))
	assert.Equal(t, []string{"DEBUG agent stderr line=hello"}, rec.lines())
}

func TestFinishStopsACollectorWhoseWriterStaysOpen(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer w.Close()
	defer r.Close()
	c := Start(r, nil, NewMasker(nil))
	_, err = io.WriteString(w, "first\nstill buffered, no newline")
	require.NoError(t, err)
	select {
	case <-c.Done():
		t.Fatal("the writer is open: the collector cannot have finished")
	default:
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	require.NoError(t, c.Finish(ctx))
	assert.Equal(t, []string{"first", "still buffered, no newline"}, c.Lines())
	assert.ErrorIs(t, c.Err(), os.ErrDeadlineExceeded)
	require.NoError(t, c.Finish(ctx), "finishing twice is harmless")
}

func TestFinishBoundedWhenReaderCannotBeInterrupted(t *testing.T) {
	pr, pw := io.Pipe()
	c := Start(pr, nil, NewMasker(nil))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, c.Finish(ctx), context.Canceled)
	// Closing the read end, as teardown does last (TD-10), ends it.
	require.NoError(t, pr.Close())
	<-c.Done()
	require.NoError(t, pw.Close())
}

func TestOverlongLineIsCut(t *testing.T) {
	long := strings.Repeat("a", MaxLineBytes+100)
	c := collect(t, long+"\nnext\n", nil)
	lines := c.Lines()
	require.Len(t, lines, 2)
	assert.Len(t, lines[0], MaxLineBytes)
	assert.Equal(t, "next", lines[1])
}

func TestKeptLinesAreBounded(t *testing.T) {
	line := strings.Repeat("b", 1000) + "\n"
	c := collect(t, strings.Repeat(line, MaxKeptBytes/1000+50)+"end\n", nil)
	lines := c.Lines()
	total := 0
	for _, l := range lines {
		total += len(l)
	}
	assert.LessOrEqual(t, total, MaxKeptBytes)
	assert.Equal(t, "end", lines[len(lines)-1])
	assert.True(t, strings.HasPrefix(c.Tail(), OmittedPrefix))
}

// TestSS2_SS3_OverlongLineCutKeepsNoHeadOfASecret: an overlong line whose
// 64 KiB cut falls inside a secret (an environment value or one found by
// its shape) keeps none of it, wherever the cut falls.
func TestSS2_SS3_OverlongLineCutKeepsNoHeadOfASecret(t *testing.T) {
	const env = "Zp4Wq8Rt2Yu6Io0PaSdFgHjK"
	secrets := []string{env, "sk-" + strings.Repeat("Ab1", 10), "api_key=" + strings.Repeat("Qw9", 9)}
	m := NewMasker([]string{"SOME_TOKEN=" + env})
	for _, secret := range secrets {
		for before := 1; before < len(secret); before += 4 {
			line := strings.Repeat("x", MaxLineBytes-before-1) + " " + secret + " " + strings.Repeat("y", 8<<10)
			c := Start(strings.NewReader(line+"\n"), nil, m)
			<-c.Done()
			kept := c.Lines()[0]
			assert.LessOrEqual(t, len(kept), MaxLineBytes)
			head := secret[:before]
			if k := len("api_key="); strings.HasPrefix(secret, "api_key=") {
				head = secret[k:max(before, k)]
			}
			if head != "" {
				assert.False(t, strings.HasSuffix(kept, head), "%q cut after %d bytes: the line ends %q", secret, before, kept[max(len(kept)-40, 0):])
			}
		}
	}
}
