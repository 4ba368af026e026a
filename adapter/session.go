package adapter

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/adapter/internal/launch"
	"acpkit.dev/adapter/internal/measure"
	"acpkit.dev/adapter/internal/normalize"
	"acpkit.dev/adapter/internal/stderrlog"
)

// session is the state behind a Session. Everything mutable during the
// session's life belongs to its pump goroutine; the fields here are set
// during StartSession, before the Session is returned, and read-only after,
// except the atomics.
type session struct {
	a           *Adapter
	log         *slog.Logger
	params      StartParams
	readTimeout time.Duration
	grace       time.Duration
	// remote: the runtime runs over SSH behind a local ssh relay (§21).
	remote bool
	// dialed: the runtime is served over the network, reached through a
	// connection instead of a process ([acpkit], WithDialer).
	dialed bool

	proc *launch.Process
	// pid is proc's PID as events carry it, formatted once.
	pid    string
	conn   *acpsdk.Conn
	stderr *stderrlog.Collector
	pump   *pump
	// tap reports the traffic to WithWireTap's function; nil without one.
	tap *tapper

	// source is the measurement source the handshake confirmed (MS-3),
	// nil for an unmeasured session; TD-11 closes it.
	source measure.Source

	// closeMethod is session/close, session/delete or "" (CL-1, CL-2).
	closeMethod string
	id          string

	// abandoned latches when the post-reap stdout release gave up (§20).
	abandoned atomic.Bool
	// inTurn guards the one-turn-at-a-time rule (TU-1).
	inTurn atomic.Bool

	watchStop chan struct{}
	watchDone chan struct{}

	stopOnce sync.Once
}

// lostMessage is the turn message for a lost connection: the stdout
// release's own text once it gave up (OR-4), else DI-6's.
func (s *session) lostMessage() string {
	if s.abandoned.Load() {
		return msgStdoutAbandoned
	}
	return msgConnectionEnded
}

// watchStdout is the post-reap stdout release (OR-1, OR-2): once the child
// is reaped the reader gets the drain bound to reach end of stream; if it
// does not, a descendant still holds stdout, so the session latches
// "abandoned", closes stdout and the connection, and says so.
func (s *session) watchStdout() {
	defer close(s.watchDone)
	select {
	case <-s.proc.Exited():
	case <-s.watchStop:
		return
	}
	t := time.NewTimer(s.a.drain)
	defer t.Stop()
	select {
	case <-s.conn.Done():
	case <-s.watchStop:
	case <-t.C:
		s.abandoned.Store(true)
		s.log.Warn(logStdoutNotCollected, "drain_bound", s.a.drain)
		_ = s.proc.Stdout().Close()
		// Close waits for the connection's goroutines; the handlers end
		// on their cancelled contexts.
		_ = s.conn.Close()
	}
}

// inbound is the connection's OrderedFunc: it runs on the connection's
// dispatcher goroutine and hands each item, stamped with the time it was
// read, to the pump, so the pump's messages from the connection are in read
// order (EV-13). A full pump makes it wait, and the connection's bound then
// stops the reader.
func (s *session) inbound(ctx context.Context, in *acpsdk.Inbound) {
	m := pumpMsg{in: in, at: s.a.now()}
	if in.Kind == acpsdk.InboundNotification {
		// The connection reuses a notification's Inbound once this
		// returns: the pump gets a copy of its request.
		m.in, m.note = nil, *in.Request
	}
	if in.Kind == acpsdk.InboundEnd {
		// The end is delivered even when Close is what ended the
		// connection (and ctx with it): an open turn ends on it.
		select {
		case s.pump.in <- m:
		case <-s.pump.done:
		}
		return
	}
	if s.pump.put(ctx, m) || in.Reply == nil {
		return
	}
	// The connection is closing or the pump is gone (TD-1). A session/update
	// with "id": null never gets here: acpsdk reads it as the notification
	// the schema makes it (EV-12).
	in.Reply.Answer(teardownAnswer(in.Request.Method))
}

// methodNegativeControl is SR-3's probe, a vendor method no protocol
// release can define; every protocol method is gen's Method… constant.
const methodNegativeControl = "_sortie.dev/probe/unimplemented"

// Turn and start messages of the spec, byte for byte.
const (
	msgConnectionEnded   = "the agent's connection ended before a response arrived"
	msgStdoutAbandoned   = "the agent runtime exited before the session finished collecting its output"
	msgTurnInFlight      = "a turn is already in flight for this session"
	msgTurnStartTimeout  = "timed out waiting for the agent connection to start the turn"
	msgStreamEndedNoTurn = "the agent connection ended before this turn could start"
	msgPromptSendFailed  = "failed to send the prompt to the agent"
	msgPromptError       = "session/prompt error %d: %s"
	msgPromptUndecodable = "the agent's response to the prompt did not decode"
	msgOversizeLine      = "a line from the agent exceeded the connection's line bound"
	msgSessionStarted    = "session started"
	msgResponseTimeout   = "timed out waiting for a response"
	msgCredentialRefused = "the agent runtime refused its credential: "
	msgInitializeError   = "initialize error %d: %s"
	msgInitUndecodable   = "initialize response did not decode"
	msgProtocolVersion   = "agent reported protocol version %d, want 1"
	msgNewError          = "session/new error %d: %s"
	msgNewUndecodable    = "session/new response did not decode"
	msgConnEndedStart    = "agent connection ended before responding"
	msgStartCancelled    = "session start was cancelled"
	msgLoadHoldCancelled = "session start was cancelled while deferring session/load"
	msgSessionNotStarted = "the session was never started"
	msgQueueOverflow     = "%d events that arrived between turns were dropped: at most %d are kept for the next turn"
)

// teardownAnswer is the answer to a request still open at teardown (TD-1):
// a permission request gets the cancelled outcome, anything else -32601.
func teardownAnswer(method string) (any, error) {
	if method == gen.MethodSessionRequestPermission {
		return permissionCancelled, nil
	}
	return nil, acpsdk.ErrMethodNotFound
}

// permissionCancelled is the cancelled answer to a permission request
// (PM-2, TU-8, TD-1): {"outcome":{"outcome":"cancelled"}}. It is only ever
// encoded, never changed.
var permissionCancelled = &gen.RequestPermissionResponse{Outcome: &gen.RequestPermissionOutcomeCancelled{}}

// permissionSelected is PM-1's refusal, selecting optionID:
// {"outcome":{"outcome":"selected","optionId":<id>}}.
func permissionSelected(optionID string) *gen.RequestPermissionResponse {
	return &gen.RequestPermissionResponse{Outcome: &gen.RequestPermissionOutcomeSelected{OptionID: gen.PermissionOptionID(optionID)}}
}

// event converts a normalized event into the public one for this session.
func (s *session) event(sessionID string, e normalize.Event) Event {
	return Event{
		Type:           e.Type,
		Time:           e.Time.UTC(),
		AgentPID:       s.pid,
		SessionID:      sessionID,
		Message:        e.Message,
		ToolName:       e.ToolName,
		ToolDurationMS: e.ToolDurationMS,
		ToolError:      e.ToolError,
	}
}
