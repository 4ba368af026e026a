package check

import (
	"context"
	"slices"
	"strings"
)

// UnknownAuthMethod is an auth method id no agent advertises.
const UnknownAuthMethod = "acpcheck-no-such-auth-method"

func checkAuthUnknownMethod(ctx context.Context, s *Session) error {
	h, err := gated(ctx, s, GateAuthMethods)
	if err != nil {
		return err
	}
	m, err := s.Authenticate(ctx, UnknownAuthMethod)
	if err != nil {
		return err
	}
	if m.Error == nil {
		return Failf("authenticate %q, a method the agent did not advertise (it advertises %s), answered %s, want an error",
			UnknownAuthMethod, strings.Join(h.AuthMethods, ", "), describe(m))
	}
	return nil
}

// checkAuthMethod grades authenticate itself with the method the user
// named: logging in with a real method may open a browser or a terminal,
// so acpcheck only ever authenticates with the one it was asked to.
func checkAuthMethod(ctx context.Context, s *Session) error {
	h, err := gated(ctx, s, GateAuthMethods)
	if err != nil {
		return err
	}
	if s.authMethod == "" {
		return Skipf("run with --auth-method ID (one of %s) to grade authenticate: acpcheck never starts a login it was not asked for", strings.Join(h.AuthMethods, ", "))
	}
	if !slices.Contains(h.AuthMethods, s.authMethod) {
		return Skipf("--auth-method %q is not among the methods the agent advertises for authenticate (%s)", s.authMethod, strings.Join(h.AuthMethods, ", "))
	}
	m, err := s.Authenticate(ctx, s.authMethod)
	if err != nil {
		return err
	}
	if m.Error != nil {
		if !documentedCodes[m.Error.Code] || strings.TrimSpace(m.Error.Message) == "" {
			return Failf("authenticate %q answered %v: not an error the schema documents (ErrorCode) with a message", s.authMethod, m.Error)
		}
		return nil
	}
	if kindOf(m.Result) != "an object" {
		return Failf("authenticate %q answered %s, want an AuthenticateResponse object", s.authMethod, describe(m))
	}
	s.authenticated = true
	return nil
}
