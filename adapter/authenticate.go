package adapter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/adapter/internal/normalize"
)

// AuthMethodError is the cause of a start whose StartParams.AuthMethodID
// the runtime did not advertise (AU-5): the start failed after initialize
// and before any session call. Advertised lists the ids it does advertise
// for authenticate, in its order; a terminal method (which a client runs
// itself and never passes to authenticate) is not among them.
type AuthMethodError struct {
	Requested  string
	Advertised []string
}

// Error names the requested method and the advertised ones.
func (e *AuthMethodError) Error() string {
	if len(e.Advertised) == 0 {
		return fmt.Sprintf("the agent runtime advertises no auth method, so it cannot authenticate with %q", e.Requested)
	}
	return fmt.Sprintf("the agent runtime does not advertise the auth method %q; it advertises %s", e.Requested, strings.Join(e.Advertised, ", "))
}

// msgAuthenticateError is an authenticate call's error answer (AU-5).
const msgAuthenticateError = "the agent runtime refused to authenticate with %q: %s"

// authMethodIDs are the ids a client may pass to authenticate: every
// advertised method but the terminal ones, which the schema says a client
// must not pass.
func authMethodIDs(methods []gen.AuthMethod) []string {
	var ids []string
	for _, m := range methods {
		switch m := m.(type) {
		case *gen.AuthMethodAgent:
			ids = append(ids, string(m.ID))
		case *gen.AuthMethodUnknown:
			// A method type newer than the schema: its id is still an
			// advertised one.
			if id, _ := normalize.StringMember(m.Raw, "id"); id != "" {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// authenticate is AU-5: with the method the start parameters name, after
// the handshake and before any session call, bounded as initialize is
// (HS-2: a runtime may reach its backend to establish the credential).
// Nothing happens when none is named (AU-1).
func (s *session) authenticate(ctx context.Context, f handshakeFacts) error {
	id := s.params.AuthMethodID
	if id == "" {
		return nil
	}
	if !slices.Contains(f.authMethods, id) {
		e := &AuthMethodError{Requested: id, Advertised: f.authMethods}
		return newError(KindCredentialUnverified, e.Error(), e)
	}
	cctx, cancel := context.WithTimeout(ctx, max(s.readTimeout, s.a.handshakeFloor))
	defer cancel()
	var raw json.RawMessage
	err := s.conn.Call(cctx, gen.MethodAuthenticate, &gen.AuthenticateRequest{MethodID: gen.AuthMethodID(id)}, &raw)
	if err == nil {
		return nil
	}
	err = callError(ctx, cctx, err)
	if e, ok := errors.AsType[*acpsdk.Error](err); ok {
		return newError(KindCredentialUnverified, fmt.Sprintf(msgAuthenticateError, id, normalize.ErrorText(e.Message, e.Data)), e)
	}
	return err
}
