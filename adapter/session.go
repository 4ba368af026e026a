package adapter

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk"
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

	proc   *launch.Process
	conn   *acpsdk.Conn
	stderr *stderrlog.Collector
	pump   *pump

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
	// requests counts request handlers still running, so teardown can
	// wait for their answers before flushing (TD-1).
	requests sync.WaitGroup

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

// handler is the connection's inbound side: every request and notification
// goes to the pump, in arrival order.
func (s *session) handle(ctx context.Context, req *acpsdk.Request) (any, error) {
	at := s.a.now()
	if req.IsNotification() {
		if req.Method != methodSessionUpdate {
			return nil, acpsdk.ErrMethodNotFound
		}
		s.pump.send(ctx, pumpUpdate{params: req.Params, at: at})
		return nil, nil
	}
	switch req.Method {
	case methodRequestPermission, methodElicitationCreate:
	default:
		// The connection answers -32601 and reports it to the observer,
		// which tells the pump (PM-4).
		return nil, acpsdk.ErrMethodNotFound
	}
	s.requests.Add(1)
	defer s.requests.Done()
	r := pumpRequest{method: req.Method, params: req.Params, at: at, answer: make(chan requestAnswer, 1)}
	if !s.pump.send(ctx, r) {
		return teardownAnswer(req.Method)
	}
	select {
	case ans := <-r.answer:
		return ans.result, ans.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.pump.done:
		// The pump answers everything it received before exiting.
		select {
		case ans := <-r.answer:
			return ans.result, ans.err
		default:
			return teardownAnswer(req.Method)
		}
	}
}

// observer turns the connection's reports into pump messages and logs.
func (s *session) observer() acpsdk.Observer {
	return acpsdk.Observer{
		OversizeLine: func(*acpsdk.OversizeError) {
			s.pump.post(pumpFault{kind: faultOversize})
		},
		UnparsableLine: func([]byte) {
			s.pump.post(pumpFault{kind: faultUnparsable})
		},
		InvalidMessage: func([]byte, string) {
			s.pump.post(pumpFault{kind: faultUnparsable})
		},
		MethodNotFound: func(method string, _ json.RawMessage) {
			s.pump.post(pumpFault{kind: faultUnimplemented, method: method})
		},
		UnhandledNotification: func(method string) {
			s.log.Debug(logUnhandledNotification, "method", method)
		},
		NotificationFailed: func(method string, err error) {
			s.log.Debug(logUnhandledNotification, "method", method, "error", err)
		},
		UnmatchedResponse: func(id json.RawMessage) {
			s.log.Debug(logUnmatchedResponse, "id", string(id))
		},
	}
}

// The methods the adapter sends or serves.
const (
	methodInitialize        = "initialize"
	methodSessionNew        = "session/new"
	methodSessionLoad       = "session/load"
	methodSessionResume     = "session/resume"
	methodSessionPrompt     = "session/prompt"
	methodSessionClose      = "session/close"
	methodSessionDelete     = "session/delete"
	methodSessionUpdate     = "session/update"
	methodRequestPermission = "session/request_permission"
	methodElicitationCreate = "elicitation/create"
	methodNegativeControl   = "_sortie.dev/probe/unimplemented"
)

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
	msgRemoteUnsupported = "remote launch over ssh is not supported by this build"
	msgSessionNotStarted = "the session was never started"
)

// teardownAnswer is the answer to a request still open at teardown (TD-1):
// a permission request gets the cancelled outcome, anything else -32601.
func teardownAnswer(method string) (any, error) {
	if method == methodRequestPermission {
		return permissionCancelled, nil
	}
	return nil, acpsdk.ErrMethodNotFound
}

// The permission answers of PM-1/PM-2.
type permissionOutcome struct {
	Outcome  string `json:"outcome"`
	OptionID string `json:"optionId,omitempty"`
}

type permissionResponse struct {
	Outcome permissionOutcome `json:"outcome"`
}

var permissionCancelled = permissionResponse{Outcome: permissionOutcome{Outcome: "cancelled"}}

// event converts a normalized event into the public one for this session.
func (s *session) event(sessionID string, e normalize.Event) Event {
	return Event{
		Type:           EventType(e.Type),
		Time:           e.Time.UTC(),
		AgentPID:       s.proc.PID(),
		SessionID:      sessionID,
		Message:        e.Message,
		ToolName:       e.ToolName,
		ToolDurationMS: e.ToolDurationMS,
		ToolError:      e.ToolError,
	}
}
