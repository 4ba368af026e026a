//go:build unix || windows

package launch

import (
	"context"
	"os/exec"
	"time"
)

// bindAndReap is the end of a local start on every platform: it binds p's
// life to ctx (SP-3: the graceful signal when ctx ends, the kill grace
// later; a non-positive grace means DefaultGrace) and reaps cmd on a
// goroutine of its own, closing p.exited once the status is recorded.
func (p *Process) bindAndReap(ctx context.Context, cmd *exec.Cmd, grace time.Duration) {
	if grace <= 0 {
		grace = DefaultGrace
	}
	stopBinding := context.AfterFunc(ctx, func() { p.endGroup(grace) })
	go func() {
		// cmd.Wait closes nothing of ours: every stdio is an *os.File we
		// own, so no copying goroutines exist and the read ends stay open.
		p.status = exitStatus(cmd.Wait())
		close(p.exited)
		stopBinding()
	}()
}
