package acpsdk

import (
	"context"
	"errors"
	"reflect"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/acpsdk/internal/jsonx"
	"acpkit.dev/acpsdk/internal/surface"
)

// DecodeParams decodes the params of a request or notification into into,
// a pointer to its method's params type in the stable surface (a
// *gen.SessionNotification for session/update, a
// *gen.RequestPermissionRequest for session/request_permission, ...), for
// a consumer that gets raw messages ([OrderedFunc], a raw [Handler]).
// Params the connection read are decoded straight from the line it
// validated, without validating them again, as [Inbound.Result] decodes a
// result, and the decoded strings share the line (see the package
// documentation). Params set or changed by the program, and any other
// destination, are validated first (json.Unmarshal). Absent params decode
// as {}, so that a missing required member is named; a failure is a
// *gen.DecodeError whose path starts with "params" ("params.update").
func (r *Request) DecodeParams(into any) error {
	if sameBytes(r.Params, r.validated) {
		if ok, err := decodeTrustedParams(r.Method, r.Params, into); ok {
			return err
		}
	}
	params := []byte(r.Params)
	if len(jsonx.TrimSpace(params)) == 0 {
		params = []byte("{}")
	}
	if err := json.Unmarshal(params, into); err != nil {
		return jsonx.AtField(err, "params")
	}
	return nil
}

// paramsTypes is the params type (a pointer) of each stable method.
var paramsTypes = func() map[string]reflect.Type {
	m := make(map[string]reflect.Type, len(gen.Methods))
	for _, mi := range gen.Methods {
		if mi.NewParams != nil {
			m[mi.Name] = reflect.TypeOf(mi.NewParams())
		}
	}
	return m
}()

// stable is the stable surface's description, whose trusted dispatchers
// decode params without validating them again.
var stable = surface.SpecOf(gen.Surface)

// decodeTrustedParams decodes params read from a validated line into into
// when into points to method's params type: it runs the stable surface's
// trusted dispatcher with a capture as the implementation, which keeps
// what the dispatcher decoded. ok is false for any other destination (or a
// method the capture does not implement, which a test rules out).
func decodeTrustedParams(method string, params []byte, into any) (ok bool, err error) {
	mi, known := gen.LookupMethod(method)
	if !known || reflect.TypeOf(into) != paramsTypes[method] {
		return false, nil
	}
	c := &capture{into: into}
	switch mi.Side {
	case gen.SideClient:
		_, err = stable.DispatchClient(context.Background(), c, method, params)
	case gen.SideAgent:
		_, err = stable.DispatchAgent(context.Background(), c, method, params)
	default:
		return false, nil
	}
	if errors.Is(err, gen.ErrNotImplemented) {
		return false, nil
	}
	if err != nil {
		return true, err // the params did not decode into the method's type
	}
	return c.took, nil
}

// capture implements every method of the stable surface's Client and Agent
// (and their optional handler interfaces) by keeping the params it was
// called with, when they have into's type.
type capture struct {
	into any
	took bool
}

// keep copies the decoded params p into c.into when it is a *T.
func keep[T any](c *capture, p *T) error {
	if x, ok := c.into.(*T); ok {
		*x = *p
		c.took = true
	}
	return nil
}

// The client's methods.

func (c *capture) SessionUpdate(_ context.Context, p *gen.SessionNotification) error {
	return keep(c, p)
}

func (c *capture) RequestPermission(_ context.Context, p *gen.RequestPermissionRequest) (*gen.RequestPermissionResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) CompleteElicitation(_ context.Context, p *gen.CompleteElicitationNotification) error {
	return keep(c, p)
}

func (c *capture) CreateElicitation(_ context.Context, p *gen.CreateElicitationRequest) (*gen.CreateElicitationResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) ReadTextFile(_ context.Context, p *gen.ReadTextFileRequest) (*gen.ReadTextFileResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) WriteTextFile(_ context.Context, p *gen.WriteTextFileRequest) (*gen.WriteTextFileResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) CreateTerminal(_ context.Context, p *gen.CreateTerminalRequest) (*gen.CreateTerminalResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) KillTerminal(_ context.Context, p *gen.KillTerminalRequest) (*gen.KillTerminalResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) TerminalOutput(_ context.Context, p *gen.TerminalOutputRequest) (*gen.TerminalOutputResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) ReleaseTerminal(_ context.Context, p *gen.ReleaseTerminalRequest) (*gen.ReleaseTerminalResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) WaitForTerminalExit(_ context.Context, p *gen.WaitForTerminalExitRequest) (*gen.WaitForTerminalExitResponse, error) {
	return nil, keep(c, p)
}

// The agent's methods.

func (c *capture) Initialize(_ context.Context, p *gen.InitializeRequest) (*gen.InitializeResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) Cancel(_ context.Context, p *gen.CancelNotification) error {
	return keep(c, p)
}

func (c *capture) NewSession(_ context.Context, p *gen.NewSessionRequest) (*gen.NewSessionResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) Prompt(_ context.Context, p *gen.PromptRequest) (*gen.PromptResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) Authenticate(_ context.Context, p *gen.AuthenticateRequest) (*gen.AuthenticateResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) Logout(_ context.Context, p *gen.LogoutRequest) (*gen.LogoutResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) CloseSession(_ context.Context, p *gen.CloseSessionRequest) (*gen.CloseSessionResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) DeleteSession(_ context.Context, p *gen.DeleteSessionRequest) (*gen.DeleteSessionResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) ListSessions(_ context.Context, p *gen.ListSessionsRequest) (*gen.ListSessionsResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) LoadSession(_ context.Context, p *gen.LoadSessionRequest) (*gen.LoadSessionResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) ResumeSession(_ context.Context, p *gen.ResumeSessionRequest) (*gen.ResumeSessionResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) SetSessionConfigOption(_ context.Context, p *gen.SetSessionConfigOptionRequest) (*gen.SetSessionConfigOptionResponse, error) {
	return nil, keep(c, p)
}

func (c *capture) SetSessionMode(_ context.Context, p *gen.SetSessionModeRequest) (*gen.SetSessionModeResponse, error) {
	return nil, keep(c, p)
}
