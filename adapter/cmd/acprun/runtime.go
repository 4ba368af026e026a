package main

import (
	"context"
	"fmt"
	"io"

	"acpkit.dev/acpsdk/acpnet"
	"acpkit.dev/adapter"
	"acpkit.dev/adapter/cmd/acprun/internal/cli"
)

// adapterRuntime binds cli.Runtime to the real adapter.
type adapterRuntime struct{ a *adapter.Adapter }

// newRuntime builds the adapter with no extension block (acprun declares
// MCP servers through --mcp-config, which arrives per session, CFG-7),
// acprun's wire tap, its --permissions hook and --containment; with a URL,
// sessions connect to the runtime served there instead of launching one
// ([acpkit] adapter.WithDialer).
func newRuntime(o cli.RuntimeOptions) (cli.Runtime, error) {
	opts := []adapter.Option{adapter.WithLogger(o.Logger), adapter.WithWireTap(o.Tap), adapter.WithContainment(o.Containment)}
	if o.URL != "" {
		url := o.URL
		opts = append(opts, adapter.WithDialer(func(ctx context.Context) (io.ReadWriteCloser, error) {
			return acpnet.Dial(ctx, url, nil)
		}))
	}
	if o.PermissionHook != nil {
		opts = append(opts, adapter.WithPermissionHook(o.PermissionHook))
	}
	a, err := adapter.New(nil, opts...)
	if err != nil {
		return nil, err
	}
	return adapterRuntime{a: a}, nil
}

func (r adapterRuntime) StartSession(ctx context.Context, p adapter.StartParams) (cli.Session, error) {
	s, err := r.a.StartSession(ctx, p)
	return cli.Session{ID: s.ID, AgentPID: s.AgentPID, Handle: s}, err
}

func (r adapterRuntime) RunTurn(ctx context.Context, s cli.Session, p adapter.TurnParams) (adapter.TurnResult, error) {
	as, err := session(s)
	if err != nil {
		return adapter.TurnResult{}, err
	}
	return r.a.RunTurn(ctx, as, p)
}

func (r adapterRuntime) StopSession(ctx context.Context, s cli.Session) error {
	as, err := session(s)
	if err != nil {
		return err
	}
	return r.a.StopSession(ctx, as)
}

// session recovers the adapter's session from the handle StartSession made.
func session(s cli.Session) (adapter.Session, error) {
	as, ok := s.Handle.(adapter.Session)
	if !ok {
		return adapter.Session{}, fmt.Errorf("acprun: session handle is %T, not an adapter session", s.Handle)
	}
	return as, nil
}
