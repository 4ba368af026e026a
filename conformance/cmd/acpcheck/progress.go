package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"acpkit.dev/conformance/check"
	"acpkit.dev/internal/cmdline"
)

// progressInterval paces the redraw of the progress line.
const progressInterval = 250 * time.Millisecond

// progressLine draws "check n of N: ID (elapsed)" on one terminal line,
// redrawn while a check runs, so a grading that takes minutes against a
// real runtime is visibly alive.
type progressLine struct {
	w    io.Writer
	mu   sync.Mutex
	cur  check.Progress
	at   time.Time
	quit chan struct{}
	done chan struct{}
}

func startProgress(w io.Writer) *progressLine {
	p := &progressLine{w: w, quit: make(chan struct{}), done: make(chan struct{})}
	go p.run()
	return p
}

func (p *progressLine) run() {
	defer close(p.done)
	t := time.NewTicker(progressInterval)
	defer t.Stop()
	for {
		select {
		case <-p.quit:
			return
		case <-t.C:
			p.mu.Lock()
			p.draw()
			p.mu.Unlock()
		}
	}
}

// set is check.Config.Progress: a new check began.
func (p *progressLine) set(c check.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur, p.at = c, time.Now()
	p.draw()
}

// draw writes the line; p.mu is held.
func (p *progressLine) draw() {
	if p.cur.ID == "" {
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[2Kcheck %d of %d: %s (%s)", p.cur.N, p.cur.Total, p.cur.ID, time.Since(p.at).Round(100*time.Millisecond))
}

// stop ends the redraws and clears the line; a nil line is a no-op.
func (p *progressLine) stop() {
	if p == nil {
		return
	}
	close(p.quit)
	<-p.done
	fmt.Fprint(p.w, "\r\x1b[2K")
}

// writeTranscripts writes each result's transcript to dir/<ID>.jsonl, in
// the transcript format acprun --record writes (acprun replay and acprun
// show read it).
func writeTranscripts(dir string, rs []check.Result) error {
	for _, r := range rs {
		f, err := os.Create(filepath.Join(dir, r.ID+".jsonl"))
		if err != nil {
			return err
		}
		err = check.WriteTranscriptFile(f, r, cmdline.Version("acpcheck"))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
