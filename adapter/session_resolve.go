package adapter

import (
	"context"
	"errors"
	"time"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/adapter/internal/mcpconfig"
	"acpkit.dev/adapter/internal/normalize"
)

// resolveSession creates or continues the session (§10) and returns the id
// the runtime actually created (SR-11). caps is lowered for continuation
// when the route is missing or unconfirmed (CAP-5).
func (s *session) resolveSession(ctx context.Context, f handshakeFacts, cwd string, servers []mcpconfig.Wire, caps *normalize.Capabilities) (string, error) {
	if !f.loadSession && !f.resume {
		caps.Lower(normalize.SessionContinuation)
	}
	resumeID := s.params.ResumeSessionID
	if resumeID == "" || s.params.CredentialVerification || (!f.loadSession && !f.resume) {
		return s.newSession(ctx, cwd, servers, *caps)
	}
	method := gen.MethodSessionResume
	if f.loadSession {
		method = gen.MethodSessionLoad
	}
	id, ok, err := s.continueSession(ctx, method, resumeID, cwd, servers, *caps)
	if err != nil {
		return "", err
	}
	if ok {
		return id, nil
	}
	// SR-7: fall back inside this start; a failure of the fallback is
	// reported as if no continuation had been tried.
	caps.Lower(normalize.SessionContinuation)
	return s.newSession(ctx, cwd, servers, *caps)
}

// stageFacts is what the pump is told, before the call of method is sent:
// the start facts its confirming response decides (SS-1). The pump adopts
// them where that response is read, before anything read after it.
func stageFacts(method, id string, servers []mcpconfig.Wire, caps normalize.Capabilities) *startStage {
	return &startStage{method: method, caps: caps, deliveredServers: len(servers) > 0, sessionID: id}
}

// continueSession runs the negative control and the continuation call
// (SR-3..SR-9). ok is false when the caller should fall back to
// session/new; err is set only for failures that fail the start.
func (s *session) continueSession(ctx context.Context, method, id, cwd string, servers []mcpconfig.Wire, caps normalize.Capabilities) (string, bool, error) {
	// SR-3: the negative control, and the code it answers with.
	var controlCode *int64
	cctx, cancel := context.WithTimeout(ctx, s.readTimeout)
	err := s.conn.Call(cctx, methodNegativeControl, struct{}{}, nil)
	cancel()
	if err != nil {
		err = callError(ctx, cctx, err)
		if e, ok := errors.AsType[*acpsdk.Error](err); ok {
			controlCode = &e.Code
		} else if KindOf(err) == KindResponseTimeout {
			s.log.Warn(logNegativeControlTimout, "method", method)
			return "", false, nil
		} else {
			return "", false, err
		}
	}

	var w *loadWatch
	var params any
	if method == gen.MethodSessionLoad {
		// SR-9: never load a session this process created inside its
		// creation minute.
		if d := s.a.loadHold(cwd, id); d > 0 {
			s.log.Debug(logLoadDeferred, "session_id", id, "wait_ms", d.Milliseconds())
			if err := s.a.wait(ctx, d); err != nil {
				return "", false, newError(KindPortExit, msgLoadHoldCancelled, err)
			}
		}
		w = &loadWatch{id: id, seen: make(chan struct{})}
		// Announced before the call, so only chunks after it count (SR-5).
		if !s.pump.send(ctx, pumpLoad{w: w, st: stageFacts(method, id, servers, caps)}) {
			return "", false, newError(KindTurnCancelled, msgStartCancelled, ctx.Err())
		}
		// mcpServers is required here: an array even when empty (MCP-11).
		params = &gen.LoadSessionRequest{SessionID: gen.SessionID(id), Cwd: cwd, McpServers: orEmpty(servers)}
	} else {
		if !s.pump.send(ctx, pumpStage{stageFacts(method, id, servers, caps)}) {
			return "", false, newError(KindTurnCancelled, msgStartCancelled, ctx.Err())
		}
		// Optional here, and sent only when non-empty (MCP-11): gen
		// leaves out a nil list.
		r := &gen.ResumeSessionRequest{SessionID: gen.SessionID(id), Cwd: cwd}
		if len(servers) > 0 {
			r.McpServers = servers
		}
		params = r
	}
	unconfirmed := func() (string, bool, error) {
		// SR-6, and no staged fact survives an unconfirmed continuation.
		s.pump.send(ctx, pumpLoadEnd{})
		return "", false, nil
	}

	cctx, cancel = context.WithTimeout(ctx, s.readTimeout)
	err = s.conn.Call(cctx, method, params, nil)
	cancel()
	if err != nil {
		err = callError(ctx, cctx, err)
		if e, ok := errors.AsType[*acpsdk.Error](err); ok {
			if controlCode != nil && *controlCode == e.Code {
				s.log.Debug(logContinuationNotImpl, "method", method)
			} else {
				s.log.Warn(logContinuationFailed, "method", method, "code", e.Code)
			}
			return unconfirmed()
		}
		if KindOf(err) == KindResponseTimeout {
			s.log.Warn(logContinuationTimedOut, "method", method)
			return unconfirmed()
		}
		return "", false, err
	}
	if w == nil {
		return id, true, nil // SR-4: resume's success confirms it
	}
	// SR-5: a load needs replay, before the answer or within the read
	// timeout after it.
	t := time.NewTimer(s.readTimeout)
	defer t.Stop()
	select {
	case <-w.seen:
		return id, true, nil
	case <-t.C:
		return unconfirmed()
	case <-ctx.Done():
		return "", false, newError(KindTurnCancelled, msgStartCancelled, ctx.Err())
	}
}

// newSession creates a session (SR-1, SR-10) and records its creation for
// SR-9.
func (s *session) newSession(ctx context.Context, cwd string, servers []mcpconfig.Wire, caps normalize.Capabilities) (string, error) {
	servers = orEmpty(servers)
	if !s.pump.send(ctx, pumpStage{stageFacts(gen.MethodSessionNew, "", servers, caps)}) {
		return "", newError(KindTurnCancelled, msgStartCancelled, ctx.Err())
	}
	cctx, cancel := context.WithTimeout(ctx, s.readTimeout)
	defer cancel()
	var raw json.RawMessage
	params := &gen.NewSessionRequest{Cwd: cwd, McpServers: servers} // SR-1, MCP-11
	if err := s.conn.Call(cctx, gen.MethodSessionNew, params, &raw); err != nil {
		err = callError(ctx, cctx, err)
		if e, ok := errors.AsType[*acpsdk.Error](err); ok {
			return "", rpcStartError(msgNewError, e)
		}
		return "", err
	}
	id, ok := decodeNewSession(raw)
	if !ok {
		return "", newError(KindResponseError, msgNewUndecodable, nil)
	}
	s.a.recordCreation(cwd, id)
	return id, nil
}

// orEmpty is servers, or an empty list for nil: session/new and
// session/load always carry an mcpServers array (MCP-11).
func orEmpty(servers []mcpconfig.Wire) []mcpconfig.Wire {
	if servers == nil {
		return []mcpconfig.Wire{}
	}
	return servers
}

// decodeNewSession reads session/new's sessionId: a non-empty string.
func decodeNewSession(raw []byte) (string, bool) {
	id, ok := normalize.StringMember(raw, "sessionId")
	return id, ok && id != ""
}
