// Package adapter is Sortie's agent-client-protocol kind: it launches any
// runtime that speaks the Agent Client Protocol as a persistent subprocess,
// performs the initialize handshake, creates or continues a session, runs
// turns over session/prompt, normalizes the runtime's updates into Sortie's
// event vocabulary and tears everything down in a fixed, bounded order.
//
// The behaviour follows the adapter specification's numbered requirements;
// the tests cite them by ID. An Adapter is safe for concurrent use by many
// goroutines; each Session runs one turn at a time.
package adapter

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"acpkit.dev/adapter/internal/contain"
	"acpkit.dev/adapter/internal/launch"
	"acpkit.dev/adapter/internal/measure"
)

// Adapter starts, drives and stops sessions of the agent-client-protocol
// kind. Create it with New.
type Adapter struct {
	log      *slog.Logger
	launcher launch.Launcher
	// sshLauncher starts remote launches through launcher (§21).
	sshLauncher launch.Launcher
	now         func() time.Time
	// wait blocks for d or until ctx ends (SR-9's hold); tests replace it.
	wait func(ctx context.Context, d time.Duration) error
	// drain is the bound of §20 and TD-9 (5 s); tests shorten it.
	drain time.Duration
	// handshakeFloor is HS-2's lower bound on the initialize wait (60 s).
	handshakeFloor time.Duration
	// tap observes every session's traffic (WithWireTap); nil means none.
	tap func(WireEvent)
	// sources are the measurement sources offered every launch (§7).
	sources *measure.Registry
	// dialed says launcher connects to a served runtime (WithDialer).
	dialed bool
	// contain is what every local launch asks of containment (TD-15).
	contain contain.Config
	// permissionHook decides permission requests (PM-11); nil refuses
	// them (PM-1, PM-2).
	permissionHook PermissionHook

	// created remembers the sessions this process created, for SR-9.
	mu      sync.Mutex
	created map[creationKey]time.Time
}

type creationKey struct{ cwd, id string }

// Option configures an Adapter.
type Option func(*options)

type options struct {
	log            *slog.Logger
	launcher       launch.Launcher
	now            func() time.Time
	wait           func(ctx context.Context, d time.Duration) error
	drain          time.Duration
	handshakeFloor time.Duration
	tap            func(WireEvent)
	sources        *measure.Registry
	dialer         Dialer
	contain        contain.Config
	permissionHook PermissionHook
}

// Dialer connects to a runtime served over the network (see WithDialer).
type Dialer func(ctx context.Context) (io.ReadWriteCloser, error)

// WithDialer makes every session start connect with dial to a runtime
// served over the network (acpkit.dev/acpsdk/acpnet.Dial: Streamable
// HTTP, WebSocket or TCP), instead of launching agent.command. It is an
// [acpkit] extension, off unless asked for: the spec knows only processes.
// The workspace is still checked (LT-1, LT-2) and sent as the session's
// cwd; the command is neither resolved nor run (LT-3); there is no
// process, so the session's AgentPID is "" (SP-9), there is no stderr, no
// MCP server (MCP-2, as over SSH) and no token measurement; a dial failure
// is port_exit "failed to connect to the served runtime"; closing stdin or
// any signal of the teardown closes the connection, and the connection's
// end is the runtime's exit.
func WithDialer(dial Dialer) Option { return func(o *options) { o.dialer = dial } }

// WithLogger sends the adapter's records to l; every record carries
// component=clientprotocol-adapter. Without it the adapter logs nothing.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// The production bounds the spec fixes.
const (
	drainBound             = 5 * time.Second  // OR-1, TD-9
	handshakeFloor         = 60 * time.Second // HS-2
	creationRecordLifetime = 2 * time.Minute  // SR-9
)

// New builds an Adapter. extension is the decoded agent-client-protocol
// block of WORKFLOW.md (may be nil); a block that ValidateExtension rejects
// fails with the same message (VAL-3). The block is not kept (CFG-7).
func New(extension map[string]any, opts ...Option) (*Adapter, error) {
	var errs []error
	for _, f := range ValidateExtension(extension) {
		if f.Severity == SeverityError {
			errs = append(errs, errors.New(f.Message))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	o := options{
		launcher:       launch.Local{},
		now:            time.Now,
		wait:           sleepCtx,
		drain:          drainBound,
		handshakeFloor: handshakeFloor,
		sources:        defaultSources(),
	}
	for _, opt := range opts {
		opt(&o)
	}
	if err := checkContainment(o.contain.Mode); err != nil {
		return nil, err
	}
	if o.dialer != nil {
		o.launcher = launch.Dialed{Dial: o.dialer}
	}
	return &Adapter{
		log:            componentLogger(o.log),
		launcher:       o.launcher,
		sshLauncher:    launch.SSH{Relay: o.launcher},
		now:            o.now,
		wait:           o.wait,
		drain:          o.drain,
		handshakeFloor: o.handshakeFloor,
		tap:            o.tap,
		sources:        o.sources,
		dialed:         o.dialer != nil,
		contain:        o.contain,
		permissionHook: o.permissionHook,
		created:        make(map[creationKey]time.Time),
	}, nil
}

// sleepCtx waits d or until ctx ends, returning ctx's error in that case.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Session is a started session. ID is the session id the runtime created
// (SR-11) and AgentPID the runtime's process id (SP-9). The zero Session,
// as returned by a failed StartSession, may be passed to StopSession.
type Session struct {
	ID       string
	AgentPID string
	s        *session
}

// recordCreation remembers a session this process created (SR-9), evicting
// records older than two minutes.
func (a *Adapter) recordCreation(cwd, id string) {
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, t := range a.created {
		if d := now.Sub(t); d > creationRecordLifetime || d < -creationRecordLifetime {
			delete(a.created, k)
		}
	}
	a.created[creationKey{cwd, id}] = now
}

// loadHold is how long a session/load for (cwd, id) must wait so that it
// happens after the UTC minute of the session's creation (SR-9): zero when
// this process did not create it or the minute has passed, at most a minute
// (a clock that stepped backwards clamps to one minute).
func (a *Adapter) loadHold(cwd, id string) time.Duration {
	a.mu.Lock()
	t, ok := a.created[creationKey{cwd, id}]
	a.mu.Unlock()
	if !ok {
		return 0
	}
	next := t.UTC().Truncate(time.Minute).Add(time.Minute)
	d := next.Sub(a.now().UTC())
	return min(max(d, 0), time.Minute)
}
