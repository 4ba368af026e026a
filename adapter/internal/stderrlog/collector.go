// Package stderrlog collects a runtime's standard error for the adapter:
// every line is logged at Debug while it drains and kept (sanitised, with
// secrets masked) so a failed start can re-log it at Warn (SS-2, LOG-21)
// and quote its tail in the early exit report (SS-3).
package stderrlog

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"acpkit.dev/adapter/internal/contract"
	"acpkit.dev/adapter/internal/fault"
)

// Bounds and fixed texts.
const (
	// LogMessage is the record message of a stderr line (LOG-21).
	LogMessage = "agent stderr"
	// MaxLineBytes bounds one kept line (sanitised); the rest of a longer
	// line is dropped.
	MaxLineBytes = 64 << 10
	// MaxKeptBytes bounds the lines kept; the oldest go first.
	MaxKeptBytes = 1 << 20
	// TailBytes bounds the SS-3 tail, prefix included.
	TailBytes = 8192
	// OmittedPrefix starts a tail that lost its beginning.
	OmittedPrefix = "[earlier output omitted] "
	// NoOutput is the tail of a runtime that wrote nothing to stderr.
	NoOutput = "no standard-error output"
	// Separator joins the tail's lines.
	Separator = " | "
	// finishWindow is how long Finish keeps reading what is already
	// buffered in the pipe before it stops the reader.
	finishWindow = 50 * time.Millisecond
)

// Collector reads a runtime's stderr on its own goroutine until end of
// stream, a read error, or Finish.
type Collector struct {
	r      io.Reader
	log    *slog.Logger
	masker *Masker
	done   chan struct{}

	mu      sync.Mutex
	lines   []string
	kept    int // bytes of lines
	dropped int // lines dropped for MaxKeptBytes
	err     error
}

// Start begins collecting r. log receives one Debug record per line
// (LOG-21; nil discards); masker masks secrets (nil means DefaultMasker).
func Start(r io.Reader, log *slog.Logger, masker *Masker) *Collector {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if masker == nil {
		masker = DefaultMasker()
	}
	c := &Collector{r: r, log: log, masker: masker, done: make(chan struct{})}
	go c.run()
	return c
}

func (c *Collector) run() {
	defer close(c.done)
	// A line is read with the masker's lookahead past MaxLineBytes, so a
	// secret across the cut is seen whole (see add).
	br := bufio.NewReaderSize(c.r, MaxLineBytes+c.masker.Lookahead())
	for {
		raw, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// An overlong line: keep its start, skip the rest.
			c.add(string(raw), true)
			err = skipLine(br)
		} else if len(raw) > 0 {
			c.add(string(raw), false)
		}
		if err != nil {
			c.mu.Lock()
			if !errors.Is(err, io.EOF) {
				c.err = err
			}
			c.mu.Unlock()
			return
		}
	}
}

// skipLine discards up to and including the next newline.
func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// add keeps one line: sanitised, cut to MaxLineBytes, masked and trimmed;
// blank lines are not kept. cut says raw is only the start of a longer
// line. A cut never falls inside a secret (Masker.Cut): it moves back to
// the secret's start, so the head of a credential whose tail is cut off is
// not kept unmasked.
func (c *Collector) add(raw string, cut bool) {
	s := Sanitize(raw)
	if n := len(s); cut || n > MaxLineBytes {
		if cut {
			n -= c.masker.Lookahead() // what follows must be seen
		}
		n = max(min(n, MaxLineBytes), 0)
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:c.masker.Cut(s, n)]
	}
	line := strings.TrimSpace(c.masker.Mask(s))
	if line == "" {
		return
	}
	c.log.Debug(LogMessage, slog.String("line", line))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, line)
	c.kept += len(line)
	for c.kept > MaxKeptBytes && len(c.lines) > 1 {
		c.kept -= len(c.lines[0])
		c.lines[0] = ""
		c.lines = c.lines[1:]
		c.dropped++
	}
}

// Done is closed when the collector has stopped reading.
func (c *Collector) Done() <-chan struct{} { return c.done }

// Err is the read error that stopped the collector, if it was not end of
// stream (for example the deadline Finish set).
func (c *Collector) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Finish stops a collector whose stream has not ended (a descendant may
// still hold the write end, TD-9) and waits for it, bounded by ctx. When
// the reader has read deadlines (an *os.File over a Unix pipe, or over the
// overlapped named pipe the Windows launcher makes; os.Pipe on Windows has
// none) it first reads what is already buffered for a short window, then
// stops; the read end stays open for the session to close last (TD-10).
// Without deadlines only closing the reader stops it. It returns ctx's
// error when ctx ends first.
func (c *Collector) Finish(ctx context.Context) error {
	select {
	case <-c.done:
		return nil
	default:
	}
	if d, ok := c.r.(interface{ SetReadDeadline(time.Time) error }); ok {
		_ = d.SetReadDeadline(time.Now().Add(finishWindow))
	}
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Lines returns the kept lines, oldest first.
func (c *Collector) Lines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...)
}

// Relog re-emits every kept line at Warn as LogMessage with attribute
// line, in order (SS-2). Call it after teardown of a failed start.
func (c *Collector) Relog(log *slog.Logger) {
	for _, l := range c.Lines() {
		log.Warn(LogMessage, slog.String("line", l))
	}
}

// Tail renders the SS-3 tail: the kept lines joined with Separator, cut
// from the front to TailBytes (OmittedPrefix included, on a rune
// boundary), or NoOutput when nothing was written.
func (c *Collector) Tail() string {
	c.mu.Lock()
	lines, dropped := c.lines, c.dropped
	joined := strings.Join(lines, Separator)
	c.mu.Unlock()
	if joined == "" && dropped == 0 {
		return NoOutput
	}
	if len(joined) <= TailBytes && dropped == 0 {
		return joined
	}
	keep := TailBytes - len(OmittedPrefix)
	if len(joined) > keep {
		joined = joined[len(joined)-keep:]
		for len(joined) > 0 && !utf8.RuneStart(joined[0]) {
			joined = joined[1:]
		}
	}
	return OmittedPrefix + joined
}

// EarlyExitMessage is the SS-3 message for a runtime that exited on its
// own before answering; status renders like "exit status 7".
func EarlyExitMessage(status string) string {
	return "the agent runtime exited before responding: " + status
}

// TailError is the wrapped detail of the early exit report: the tail of
// the runtime's stderr.
type TailError struct {
	Tail string
}

// Error returns the tail.
func (e *TailError) Error() string { return e.Tail }

// EarlyExit builds the SS-3 failure: port_exit with EarlyExitMessage(status)
// wrapping the collector's tail as a *TailError. Let the collector finish
// first so the tail is complete.
func (c *Collector) EarlyExit(status string) *fault.Error {
	return fault.New(contract.KindPortExit, EarlyExitMessage(status), &TailError{Tail: c.Tail()})
}
