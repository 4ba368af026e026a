package adapter

import (
	"context"
	"errors"
	"io"
	"time"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/adapter/internal/launch"
	"acpkit.dev/adapter/internal/mcpconfig"
	"acpkit.dev/adapter/internal/normalize"
	"acpkit.dev/adapter/internal/stderrlog"
)

// StartSession launches the runtime, performs the handshake and creates or
// continues a session (§12's order). On failure it has already torn down
// whatever it started (SS-2) and returns a zero Session with an *Error, or
// with an error wrapping ErrSSHParam for SSH parameters no launch can use;
// StopSession on that zero Session is a no-op.
//
// ctx binds the runtime's life (SP-3): when it ends, even after the start,
// the runtime's group gets the graceful signal and then the kill. So pass a
// ctx that lives as long as the session, until StopSession has returned, not
// one that only bounds the start.
func (a *Adapter) StartSession(ctx context.Context, p StartParams) (Session, error) {
	if p.CredentialVerification {
		// CL-3: a verification session never continues and carries no
		// tool server, whatever the caller passed.
		p.ResumeSessionID, p.MCPConfigPath = "", ""
	}
	// Step 1: the launch target (LT-*), or with WithDialer only the
	// workspace ([acpkit]).
	resolve := launch.Resolve
	if a.dialed {
		resolve = func(workspace, command, _ string) (launch.Target, error) {
			return launch.ResolveDialed(workspace, command)
		}
	}
	target, err := resolve(p.WorkspacePath, p.Agent.Command, p.SSHHost)
	if err != nil {
		return Session{}, lift(err)
	}
	// Nothing local reaches a runtime over SSH or served elsewhere: no MCP
	// server (MCP-2), no measurement source (MS-2).
	local := !target.Remote && !target.Dialed
	if target.Remote {
		if err := launch.CheckSSHParams(p.SSHStrictHostKeyChecking, p.SSHPassEnv); err != nil {
			return Session{}, err
		}
	}
	// Step 2: MCP servers, parsed before launch on a local launch (MCP-2).
	servers, err := mcpconfig.Load(p.MCPConfigPath, !local)
	if err != nil {
		return Session{}, lift(err)
	}
	// MS-2: the first offer; no source claims a remote launch (RS-7, SSH-3).
	m := claimAll(a.sources.Instantiate(), p.Agent.Command, target.Workspace, !local)
	// Steps 3 and 4, repeated while the handshake disagrees with what the
	// start carried (HS-6, §8), at most three times (RS-6).
	for attempt := 1; ; attempt++ {
		s := a.newSession(p, target.Remote)
		s.dialed = target.Dialed
		if err := s.launch(ctx, target, m.env()); err != nil {
			m.releaseAll()
			return Session{}, lift(err)
		}
		f, err := s.initialize(ctx)
		if err != nil {
			err = s.failStart(ctx, err)
			m.releaseAll()
			return Session{}, err
		}
		name := ""
		if f.hasAgentInfo {
			name = f.agentName
		}
		st := m.settle(name, !local, attempt == maxStarts)
		if st.restart {
			// RS-4: the whole teardown, then the released directories
			// go before the next start (RS-8); one record each (RS-9).
			s.teardown(ctx)
			for _, src := range st.released {
				_ = src.Close()
			}
			a.log.Info(st.log, "name", name)
			continue
		}
		for _, src := range st.released {
			_ = src.Close()
		}
		s.source = st.confirmed
		if err := s.authenticate(ctx, f); err != nil {
			return Session{}, s.failStart(ctx, err) // AU-5, before any session call
		}
		id, err := s.start(ctx, f, target.Workspace, servers)
		if err != nil {
			// The confirmed source is closed by the teardown (TD-11).
			return Session{}, s.failStart(ctx, err)
		}
		return Session{ID: id, AgentPID: s.proc.PID(), s: s}, nil
	}
}

// newSession is the state of one start of the runtime. remote is the one
// switch of a launch over SSH (§21): no MCP servers (MCP-2), no measurement
// source may claim and no environment of Sortie's own is added (SSH-3),
// tool servers start in the gap (CAP-2), and ssh's exit 255 is a connection
// failure (SS-4).
func (a *Adapter) newSession(p StartParams, remote bool) *session {
	return &session{
		a:           a,
		log:         a.log,
		params:      p,
		remote:      remote,
		readTimeout: p.Agent.ReadTimeout(),
		grace:       p.Agent.StopGrace(),
	}
}

// launch is step 3 (§5): the subprocess with env appended to the inherited
// environment, or the ssh relay (SSH-1, SSH-2), then its stderr collector,
// connection and pump.
func (s *session) launch(ctx context.Context, target launch.Target, env []string) error {
	launcher, spec := s.a.launcher, target.Spec(env, s.grace)
	if s.remote {
		launcher, spec = s.a.sshLauncher, target.SSHSpec(s.params.SSHStrictHostKeyChecking, s.params.SSHPassEnv, s.grace)
	}
	spec.Log = s.log // SP-5, SP-6 warnings, TD-15's record
	if !s.remote {
		spec.Contain = s.a.contain // TD-15
	}
	proc, err := launcher.Launch(ctx, spec)
	if err != nil {
		return err
	}
	s.proc = proc
	var stderr io.Reader = proc.Stderr()
	var connTap func(acpsdk.Direction, []byte)
	if s.a.tap != nil {
		s.tap = &tapper{tap: s.a.tap, pid: proc.PID(), drain: s.a.drain}
		s.tap.spawned(proc, spec)
		stderr, connTap = s.tap.stderr(stderr), s.tap.conn
	}
	s.stderr = stderrlog.Start(stderr, s.log, nil)
	s.pump = newPump(s)
	// One ordered sequence of everything read (EV-13); a null id is a
	// request to answer (PM-10), except on session/update (EV-12).
	s.conn = acpsdk.NewConn(proc.Stdout(), proc.Stdin(), nil, &acpsdk.Options{InOrder: s.inbound, Tap: connTap})
	s.watchStop, s.watchDone = make(chan struct{}), make(chan struct{})
	go s.pump.run()
	go s.watchStdout()
	return nil
}

// start runs steps 5 to 8 on a process whose handshake settled.
func (s *session) start(ctx context.Context, f handshakeFacts, cwd string, servers []mcpconfig.Server) (string, error) {
	caps := normalize.Capabilities{}
	if s.remote || s.dialed {
		caps.Lower(normalize.ToolServers) // CAP-2: none go over SSH, nor to a served runtime
	}
	if s.source == nil {
		caps.Lower(normalize.TokenCounts) // MS-4, CAP-2, RS-11
	}
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
		s.closeMethod = gen.MethodSessionDelete
	case f.close:
		s.closeMethod = gen.MethodSessionClose
	}
	// SS-1: the pump adopted the facts, then the id, where the response
	// that decided them was read (resolveSession staged them).
	s.id = id
	if s.source != nil {
		if err := s.source.Open(id); err != nil {
			// A source that cannot open measures nothing (MS-4).
			_ = s.source.Close()
			s.source = nil
		}
		// Before the first turn, which only RunTurn after this return
		// can start, so no drain can miss it.
		if !s.pump.send(ctx, pumpSourceOpened{source: s.source}) {
			return "", newError(KindTurnCancelled, msgStartCancelled, ctx.Err())
		}
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
			// An exit this adapter caused (the SP-3 binding) is not one
			// on its own.
			exited = !s.proc.Status().Stopped
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	s.teardown(ctx)
	s.stderr.Relog(s.log)
	switch {
	case exited:
		return s.earlyExit(s.proc.Status())
	case lost:
		return newError(KindPortExit, msgConnEndedStart, err)
	}
	return err
}
