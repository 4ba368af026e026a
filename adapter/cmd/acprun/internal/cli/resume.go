package cli

import (
	"fmt"
	"sync"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/adapter"
	"acpkit.dev/adapter/internal/normalize"
)

// The continuation methods and the adapter's continuation log messages
// (spec §24, byte for byte), from which acprun tells why a resume did not
// continue the saved session.
const (
	methodSessionLoad   = "session/load"
	methodSessionResume = "session/resume"

	logNegativeControlTimedOut = "continuation negative control timed out"
	logContinuationFailed      = "continuation call failed"
	logContinuationTimedOut    = "continuation call timed out"
	logContinuationNotImpl     = "continuation method not implemented"
)

// Resume policies (--resume-policy).
const (
	// resumePrefer continues the saved session when the runtime can and
	// otherwise starts a new one, as Sortie does (SR-7).
	resumePrefer = "prefer"
	// resumeRequired ends the run (exit 3) when the saved session was not
	// continued.
	resumeRequired = "required"
)

// resumeReport says what became of --resume.
type resumeReport struct {
	// Requested is the saved session id.
	Requested string
	// SessionID is the session the run uses.
	SessionID string
	// Continued is true when SessionID is the saved session.
	Continued bool
	// Route is the method that continued it, or the one that was tried.
	Route string
	// Reason says why a new session was created; empty when continued.
	Reason string
}

// continuation watches the start for what the adapter tried: the
// continuation call on the wire, its answer, and the adapter's log records
// about it.
type continuation struct {
	mu      sync.Mutex
	ids     map[string]string // request id → continuation method
	method  string            // the continuation call sent, if any
	errCode int64             // its error answer's code, when errored
	errMsg  string
	errored bool
	answer  bool // an answer (result or error) arrived
	logs    map[string]bool
}

// errorCode is a JSON-RPC error object's code, 0 when it has none.
func errorCode(rpcErr []byte) int64 {
	var code int64
	if raw, ok := normalize.Member(rpcErr, "code"); ok {
		_ = json.Unmarshal(raw, &code)
	}
	return code
}

// errorMessage is a JSON-RPC error object's message, "" when it has none.
func errorMessage(rpcErr []byte) string {
	msg, _ := normalize.StringMember(rpcErr, "message")
	return msg
}

// observe reads one tapped line.
func (c *continuation) observe(e adapter.WireEvent) {
	if e.Kind != adapter.WireSend && e.Kind != adapter.WireRecv {
		return
	}
	// Members by their exact names, as acpsdk reads the envelope: "ID" or
	// "ERROR" is another member, and such a line answers nothing.
	id, ok := normalize.Member(e.Line, "id")
	if !ok {
		return
	}
	method, _ := normalize.StringMember(e.Line, "method")
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case e.Kind == adapter.WireSend && (method == methodSessionLoad || method == methodSessionResume):
		if c.ids == nil {
			c.ids = map[string]string{}
		}
		c.ids[string(id)] = method
		c.method = method
	case e.Kind == adapter.WireRecv && method == "":
		if _, ok := c.ids[string(id)]; !ok {
			return
		}
		c.answer = true
		if rpcErr, ok := normalize.Member(e.Line, "error"); ok && string(rpcErr) != "null" {
			c.errored = true
			c.errCode, c.errMsg = errorCode(rpcErr), errorMessage(rpcErr)
		}
	}
}

// logged notes one of the adapter's continuation log records.
func (c *continuation) logged(msg string) {
	switch msg {
	case logNegativeControlTimedOut, logContinuationFailed, logContinuationTimedOut, logContinuationNotImpl:
	default:
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.logs == nil {
		c.logs = map[string]bool{}
	}
	c.logs[msg] = true
}

// report judges the start of a session that asked to continue requested.
func (c *continuation) report(requested, sessionID string) resumeReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := resumeReport{Requested: requested, SessionID: sessionID, Route: c.method}
	if sessionID == requested {
		r.Continued = true
		return r
	}
	switch {
	case c.logs[logNegativeControlTimedOut]:
		r.Reason = "the runtime did not answer the adapter's probe for unknown methods within the read timeout, so no continuation was tried"
	case c.method == "":
		r.Reason = "the runtime advertises neither session/load nor session/resume"
	case c.errored && c.logs[logContinuationNotImpl]:
		r.Reason = fmt.Sprintf("the runtime advertises %s but does not implement it (error %d: %s)", c.method, c.errCode, c.errMsg)
	case c.errored:
		r.Reason = fmt.Sprintf("the runtime refused %s: error %d: %s", c.method, c.errCode, c.errMsg)
	case c.logs[logContinuationTimedOut] || !c.answer:
		r.Reason = c.method + " got no answer within the read timeout"
	case c.method == methodSessionLoad:
		r.Reason = "session/load was answered but the runtime replayed none of the conversation, so the adapter could not confirm it continued (SR-5)"
	default:
		r.Reason = c.method + " was answered but the runtime created session " + sessionID
	}
	return r
}
