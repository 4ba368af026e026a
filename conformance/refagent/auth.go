package refagent

import (
	"context"
	"slices"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
)

// authMethods are the advertised methods: agent-type, so a client passes
// them to authenticate.
func (a *Agent) authMethods() []gen.AuthMethod {
	out := []gen.AuthMethod{}
	for _, id := range a.opts.AuthMethods {
		out = append(out, &gen.AuthMethodAgent{ID: gen.AuthMethodID(id), Name: "Reference agent method " + id})
	}
	return out
}

// Authenticate logs the connection in with an advertised method; an
// unknown method id is -32602 (unless --accept-unknown-auth).
func (ta *typedAgent) Authenticate(_ context.Context, p *gen.AuthenticateRequest) (*gen.AuthenticateResponse, error) {
	a := (*Agent)(ta)
	id := string(p.MethodID)
	known := slices.Contains(a.opts.AuthMethods, id)
	switch {
	case !known && !a.opts.AcceptUnknownAuth:
		return nil, errorf(acpsdk.CodeInvalidParams, "unknown auth method: %s", id)
	case known && a.opts.FailAuthenticate != 0:
		return nil, failure(a.opts.FailAuthenticate)
	}
	a.mu.Lock()
	a.authenticated = true
	a.mu.Unlock()
	a.log.Info("authenticated", "method", id)
	return &gen.AuthenticateResponse{}, nil
}

// requireAuth refuses a session request with -32000 while --require-auth
// holds and authenticate has not succeeded.
func (a *Agent) requireAuth() error {
	if !a.opts.RequireAuth {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.authenticated {
		return nil
	}
	return errorf(acpsdk.CodeAuthRequired, "authentication required: call authenticate before starting a session")
}
