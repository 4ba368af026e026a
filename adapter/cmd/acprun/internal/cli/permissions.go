package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"acpkit.dev/adapter"
)

// The --permissions policies other than refuse are an adapter permission
// hook (PM-11); refuse is no hook at all, the adapter's own unattended
// refusal (PM-1, PM-2), exactly as under Sortie.

// readKinds are the tool kinds --permissions approve-reads approves: they
// look, they do not change anything.
var readKinds = map[string]bool{"read": true, "search": true, "fetch": true, "think": true}

// Decision reasons, shown in the decision's event.
const (
	reasonApproveAll    = "--permissions approve-all"
	reasonApproveReads  = "--permissions approve-reads"
	reasonNotARead      = "--permissions approve-reads approves read, search, fetch and think only"
	reasonNoAllowOption = "the request offered no option that allows it"
	reasonApproved      = "approved at the terminal"
	reasonDeclined      = "declined at the terminal"
	reasonNoTerminal    = "--permissions ask found no terminal to ask at"
)

// permissionHook is the hook for the run's --permissions policy.
func (r *run) permissionHook() adapter.PermissionHook {
	switch r.cfg.Permissions {
	case permApproveAll:
		return approveAll
	case permApproveReads:
		return approveReads
	case permAsk:
		return r.ask
	}
	return nil
}

// allowOption is the option that grants the permission with the least:
// allow_once, else allow_always.
func allowOption(req adapter.PermissionRequest) (adapter.PermissionOption, bool) {
	for _, kind := range []string{"allow_once", "allow_always"} {
		for _, o := range req.Options {
			if o.Kind == kind {
				return o, true
			}
		}
	}
	return adapter.PermissionOption{}, false
}

func approveAll(_ context.Context, req adapter.PermissionRequest) adapter.PermissionDecision {
	o, ok := allowOption(req)
	if !ok {
		return adapter.PermissionDecision{Reason: reasonNoAllowOption}
	}
	return adapter.PermissionDecision{OptionID: o.ID, Reason: reasonApproveAll}
}

func approveReads(ctx context.Context, req adapter.PermissionRequest) adapter.PermissionDecision {
	if !readKinds[req.ToolKind] {
		return adapter.PermissionDecision{Reason: fmt.Sprintf("%s, not %s", reasonNotARead, req.ToolKind)}
	}
	d := approveAll(ctx, req)
	if d.OptionID != "" {
		d.Reason = reasonApproveReads
	}
	return d
}

// ask puts the request to the person at the controlling terminal: y
// approves with the least-granting allow option, anything else declines.
// Without a terminal it refuses; when ctx ends first (the turn was
// cancelled, the session stops) the question is withdrawn.
func (r *run) ask(ctx context.Context, req adapter.PermissionRequest) adapter.PermissionDecision {
	o, ok := allowOption(req)
	if !ok {
		return adapter.PermissionDecision{Reason: reasonNoAllowOption}
	}
	r.askMu.Lock()
	defer r.askMu.Unlock()
	if ctx.Err() != nil {
		return adapter.PermissionDecision{}
	}
	if r.env.OpenTTY == nil {
		return adapter.PermissionDecision{Reason: reasonNoTerminal}
	}
	tty, err := r.env.OpenTTY()
	if err != nil {
		return adapter.PermissionDecision{Reason: reasonNoTerminal}
	}
	defer tty.Close()
	resume := r.view.pause()
	defer resume()
	_, _ = io.WriteString(tty, question(req, o))
	yes, err := readYes(ctx, tty)
	if err != nil {
		_, _ = io.WriteString(tty, "\n")
		return adapter.PermissionDecision{}
	}
	if !yes {
		return adapter.PermissionDecision{Reason: reasonDeclined}
	}
	return adapter.PermissionDecision{OptionID: o.ID, Reason: reasonApproved}
}

// question is what ask writes: the tool's kind and title, the options the
// runtime offered, and what y selects.
func question(req adapter.PermissionRequest, allow adapter.PermissionOption) string {
	var opts []string
	for _, o := range req.Options {
		opts = append(opts, fmt.Sprintf("%s (%s)", o.Name, o.Kind))
	}
	title := "a tool call without a title"
	if req.Title != "" {
		title = fmt.Sprintf("%q", req.Title)
	}
	return fmt.Sprintf("acprun: the runtime asks permission for %s (kind: %s)\n  options: %s\n  allow with %q? [y/N] ",
		title, req.ToolKind, strings.Join(opts, ", "), allow.Name)
}

// deadliner is a terminal whose blocked read can be ended (an *os.File).
type deadliner interface{ SetReadDeadline(time.Time) error }

// readYes reads one line from tty and reports whether it says yes; ctx
// ending first ends the read (through a read deadline, else by closing
// tty) and returns its error.
func readYes(ctx context.Context, tty io.ReadWriteCloser) (bool, error) {
	type line struct {
		text string
		err  error
	}
	got := make(chan line, 1)
	go func() {
		var b strings.Builder
		buf := make([]byte, 1)
		for {
			n, err := tty.Read(buf)
			if n == 1 && buf[0] != '\n' {
				b.WriteByte(buf[0])
			}
			if n == 1 && buf[0] == '\n' || err != nil {
				got <- line{b.String(), err}
				return
			}
		}
	}()
	select {
	case l := <-got:
		if l.err != nil && l.text == "" {
			return false, l.err
		}
		a := strings.ToLower(strings.TrimSpace(l.text))
		return a == "y" || a == "yes", nil
	case <-ctx.Done():
		if d, ok := tty.(deadliner); ok && d.SetReadDeadline(time.Now()) == nil {
			<-got
		} else {
			_ = tty.Close()
			<-got
		}
		return false, ctx.Err()
	}
}
