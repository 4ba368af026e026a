package adapter

import (
	"context"
	"errors"
	"time"

	"acpkit.dev/acpsdk"
	"acpkit.dev/adapter/internal/launch"
	"acpkit.dev/adapter/internal/mcpconfig"
	"acpkit.dev/adapter/internal/normalize"
	"acpkit.dev/adapter/internal/stderrlog"
)

// StartSession launches the runtime, performs the handshake and creates or
// continues a session (§12's order). On failure it has already torn down
// whatever it started (SS-2) and returns a zero Session with an *Error;
// StopSession on that zero Session is a no-op.
//
// ctx binds the runtime's life (SP-3): when it ends, even after the start,
// the runtime's group gets the graceful signal and then the kill. So pass a
// ctx that lives as long as the session, until StopSession has returned, not
// one that only bounds the start.
func (a *Adapter) StartSession(ctx context.Context, p StartParams) (Session, error) {
	s := &session{
		a:           a,
		log:         a.log,
		params:      p,
		readTimeout: p.Agent.ReadTimeout(),
		grace:       p.Agent.StopGrace(),
	}
	if p.CredentialVerification {
		// CL-3: a verification session never continues and carries no
		// tool server, whatever the caller passed.
		s.params.ResumeSessionID, s.params.MCPConfigPath = "", ""
	}
	// Step 1: the launch target (LT-*).
	target, err := launch.Resolve(p.WorkspacePath, p.Agent.Command, p.SSHHost)
	if err != nil {
		return Session{}, lift(err)
	}
	if target.Remote {
		// §21 plugs a launcher in here; until then a remote launch is
		// refused before anything starts.
		return Session{}, newError(KindAgentNotFound, msgRemoteUnsupported, nil)
	}
	// Step 2: MCP servers, parsed before launch on a local launch (MCP-2).
	servers, err := mcpconfig.Load(s.params.MCPConfigPath, target.Remote)
	if err != nil {
		return Session{}, lift(err)
	}
	// Step 3: the subprocess (§5).
	spec := target.Spec(nil, s.grace)
	spec.Log = s.log // SP-5, SP-6 warnings
	proc, err := a.launcher.Launch(ctx, spec)
	if err != nil {
		return Session{}, lift(err)
	}
	s.proc = proc
	s.stderr = stderrlog.Start(proc.Stderr(), s.log, nil)
	s.pump = newPump(s)
	s.conn = acpsdk.NewConn(proc.Stdout(), proc.Stdin(), acpsdk.HandlerFunc(s.handle), &acpsdk.Options{
		Observer:             s.observer(),
		NullIDIsNotification: true, // EV-12
	})
	s.watchStop, s.watchDone = make(chan struct{}), make(chan struct{})
	go s.pump.run()
	go s.watchStdout()

	id, err := s.start(ctx, target.Workspace, servers)
	if err != nil {
		return Session{}, s.failStart(ctx, err)
	}
	return Session{ID: id, AgentPID: proc.PID(), s: s}, nil
}

// start runs steps 4 to 8 on a launched process.
func (s *session) start(ctx context.Context, cwd string, servers []mcpconfig.Server) (string, error) {
	f, err := s.initialize(ctx)
	if err != nil {
		return "", err
	}
	caps := normalize.Capabilities{}
	caps.Lower(normalize.TokenCounts) // MS-4: no source is confirmed
	if !f.hasAgentInfo {
		caps.Lower(normalize.AgentVersion) // CAP-3
	}
	rendered, withheld := mcpconfig.Render(servers, f.mcpHTTP)
	if withheld {
		s.log.Warn(logHTTPServersWithheld)
		caps.Lower(normalize.ToolServers) // CAP-4
	}
	id, err := s.resolveSession(ctx, f, cwd, rendered, &caps)
	if err != nil {
		return "", err
	}
	// Step 7: the teardown method (CL-1, CL-2).
	switch {
	case s.params.CredentialVerification && f.delete:
		s.closeMethod = methodSessionDelete
	case f.close:
		s.closeMethod = methodSessionClose
	}
	s.id = id
	// SS-1: facts, then the id, in that order, in one message.
	if !s.pump.send(ctx, pumpStarted{caps: caps, deliveredServers: len(rendered) > 0, sessionID: id}) {
		return "", newError(KindTurnCancelled, msgStartCancelled, ctx.Err())
	}
	// LOG-1: once per session, now that the id is known; name and version
	// are empty when the handshake carried no agentInfo (CAP-3 says so).
	s.log.Info(logAgentImplementation, "session_id", id, "name", f.agentName, "version", f.agentVersion)
	return id, nil
}

// failStart turns a start failure into its report (SS-2..SS-5) after the
// full teardown.
func (s *session) failStart(ctx context.Context, err error) error {
	var exited bool
	lost := errors.Is(err, errLostConnection)
	if lost {
		// SS-3: give the runtime the drain bound, while ctx lives, to be
		// reaped on its own.
		t := time.NewTimer(s.a.drain)
		select {
		case <-s.proc.Exited():
			exited = true
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	s.teardown(ctx)
	s.stderr.Relog(s.log)
	switch {
	case exited:
		return lift(s.stderr.EarlyExit(s.proc.Status().String()))
	case lost:
		return newError(KindPortExit, msgConnEndedStart, err)
	}
	return err
}
