package acpsdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"reflect"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/acpsdk/internal/jsonx"
	"acpkit.dev/acpsdk/internal/surface"
)

// SideOptions configure a [ClientSide] or an [AgentSide].
type SideOptions struct {
	// Options configure the underlying connection.
	Options
	// Strict refuses, without sending it, a call the peer's capabilities
	// do not allow (for example session/load when the agent's initialize
	// response lacks loadSession); the call returns a *CapabilityError.
	// Capabilities are learned from the initialize exchange and the
	// session setup responses that go through this side's Call (which the
	// typed peers use); calls made with Go or on the Conn directly teach
	// it nothing. The rules are the side's surface's: session/fork, say,
	// needs sessionCapabilities.fork on a v1 unstable side. On a surface
	// acpsdk has no rules for, every call but initialize is refused.
	Strict bool
	// Middleware, when set, sees every inbound request and notification
	// before the typed dispatch; see [Middleware].
	Middleware Middleware
}

// Middleware intercepts an inbound request or notification before the
// typed dispatch, with its raw id and params. It may answer itself — with
// any result (a json.RawMessage is sent as is, so it can say what no typed
// value can) or an error (an *[Error] keeps its code) — or call next, which
// runs the typed dispatch with its usual answers (-32601 for a method the
// implementation lacks, -32602 with the JSON path for bad params, {} for an
// empty result), and may change what next returned. next may be given
// another request (params replaced, say); params that are not the ones
// read are validated again. The answer to a notification is discarded, as
// always.
//
// It runs where the handler runs: on the dispatcher for a notification, on
// the request's own goroutine for a request; so the ordering guarantees
// (SDK-7) and the rules for handlers calling the peer hold unchanged, and
// ctx is the handler's context. A request answered without next is not
// seen by the typed layer, so strict mode learns nothing from it (an
// initialize answered that way leaves the client's capabilities unknown).
type Middleware func(ctx context.Context, req *Request, next HandlerFunc) (any, error)

// ExtensionHandler is implemented by a gen.Client or gen.Agent
// implementation that handles extension methods (names beginning with "_").
// Without it, extension requests are answered with -32601 and extension
// notifications are ignored.
type ExtensionHandler interface {
	// HandleExtension handles one extension request or notification; the
	// result of a notification is ignored.
	HandleExtension(ctx context.Context, method string, params json.RawMessage) (any, error)
}

// side is what every client and agent side shares, whatever its surface:
// the connection, strict mode, and the mapping of the generated dispatch
// onto JSON-RPC answers. Both embed it, so the methods below are theirs.
type side struct {
	conn *Conn
	// strict is nil unless SideOptions.Strict.
	strict *strictState
	// notImplemented is the surface's ErrNotImplemented.
	notImplemented error
}

// newSide builds a side whose connection is not started yet: the caller
// finishes wiring (handlers read the side's fields) and then calls
// s.conn.run.
func newSide[A, C, AP, CP any](spec *surface.Spec[A, C, AP, CP], r io.Reader, w io.Writer, opts *SideOptions, peerIsAgent bool, dispatch func(context.Context, *Request) (any, error)) *side {
	var so SideOptions
	if opts != nil {
		so = *opts
	}
	s := &side{notImplemented: spec.NotImplemented}
	if so.Strict {
		s.strict = newStrictState(spec.Schema, peerIsAgent, spec.NewParams, spec.NewResult)
	}
	h := HandlerFunc(dispatch)
	if mw := so.Middleware; mw != nil {
		h = func(ctx context.Context, req *Request) (any, error) {
			return mw(ctx, req, func(ctx context.Context, next *Request) (any, error) {
				// dispatch skips re-validating params that came out of a
				// validated line; params the middleware replaced did not.
				// They are copied too: the trusted decoders' strings share
				// their input, and the middleware may reuse its buffer.
				if len(next.Params) > 0 && !sameBytes(next.Params, req.Params) {
					params := next.Params
					if err := jsonx.Own((*[]byte)(&params)); err != nil {
						return nil, &Error{Code: CodeInvalidParams, Message: "invalid params: " + err.Error(), Data: json.RawMessage(`{"path":"params"}`), cause: err}
					}
					next = &Request{Method: next.Method, Params: params, ID: next.ID}
				}
				return dispatch(ctx, next)
			})
		}
	}
	s.conn = newConn(r, w, h, &so.Options)
	s.conn.reuseNotifRequest = so.Middleware == nil // dispatch keeps no Request
	return s
}

// sameBytes reports whether a and b are the same slice of the same array.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// check applies strict mode to an outgoing call or notification.
func (s *side) check(method string, params any) (any, error) {
	if s.strict == nil {
		return params, nil
	}
	return s.strict.check(method, params)
}

// Call sends any request to the peer (a method by name, or an extension
// method such as "_vendor/x") and decodes its result; see [Conn.Call]. It
// honours strict mode, and learns the peer's capabilities from the answers
// that carry them.
func (s *side) Call(ctx context.Context, method string, params, result any) error {
	params, err := s.check(method, params)
	if err != nil {
		return err
	}
	if s.strict == nil || !s.strict.learns(method) {
		return s.conn.Call(ctx, method, params, result)
	}
	// Encode params once: session setup needs them to know the session id.
	rawParams, err := encodeParams(method, params)
	if err != nil {
		return err
	}
	var sendParams any
	if rawParams != nil {
		sendParams = rawParams
	}
	var raw json.RawMessage
	if err := s.conn.Call(ctx, method, sendParams, &raw); err != nil {
		return err
	}
	// One decode serves strict mode and a typed result.
	v, err := s.strict.learnAnswer(method, rawParams, raw)
	if result == nil {
		return nil
	}
	if r, ok := result.(*json.RawMessage); ok {
		*r = raw
		return nil
	}
	if rv := reflect.ValueOf(result); v != nil && rv.Type() == reflect.TypeOf(v) && !rv.IsNil() {
		if err != nil {
			return fmt.Errorf("acpsdk: decoding %s result: %w", method, err)
		}
		rv.Elem().Set(reflect.ValueOf(v).Elem())
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("acpsdk: decoding %s result: %w", method, err)
	}
	return nil
}

// Go sends a request without waiting for its answer; see [Conn.Go]. It
// honours strict mode. A client needs it for session/prompt, whose answer
// still comes after it sends session/cancel.
func (s *side) Go(ctx context.Context, method string, params any) (*PendingCall, error) {
	params, err := s.check(method, params)
	if err != nil {
		return nil, err
	}
	return s.conn.Go(ctx, method, params)
}

// Notify sends a notification to the peer; see [Conn.Notify]. It honours
// strict mode.
func (s *side) Notify(ctx context.Context, method string, params any) error {
	params, err := s.check(method, params)
	if err != nil {
		return err
	}
	return s.conn.Notify(ctx, method, params)
}

// Conn returns the underlying connection (Flush, WriteRaw, Done, ...).
// Calls made on it directly bypass strict mode.
func (s *side) Conn() *Conn { return s.conn }

// Close closes the connection; see [Conn.Close].
func (s *side) Close() error { return s.conn.Close() }

// Done is closed when the connection has ended; see [Conn.Done].
func (s *side) Done() <-chan struct{} { return s.conn.Done() }

// Err says why the connection ended; see [Conn.Err].
func (s *side) Err() error { return s.conn.Err() }

// answer maps the generated dispatch's outcome onto the wire: a method the
// implementation lacks is -32601 (after offering extensions to an
// ExtensionHandler), params that do not decode are -32602 with the JSON
// path, and an empty typed result is sent as {} rather than null.
func (s *side) answer(ctx context.Context, impl any, req *Request, result any, err error) (any, error) {
	if errors.Is(err, s.notImplemented) {
		if x, ok := impl.(ExtensionHandler); ok && isExtension(req.Method) {
			return x.HandleExtension(ctx, req.Method, req.Params)
		}
		return nil, ErrMethodNotFound
	}
	if err != nil {
		if de, ok := errors.AsType[*gen.DecodeError](err); ok {
			return nil, invalidParams(de)
		}
		return nil, err
	}
	if req.IsNotification() {
		return nil, nil // nobody reads a notification's result
	}
	if isNilPointer(result) {
		return emptyResult, nil
	}
	return result, nil
}

// emptyResult answers a request whose handler returned no result. It is
// shared: the writer only reads it.
var emptyResult = json.RawMessage("{}")

func isNilPointer(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// invalidParams builds the -32602 answer; data.path names the failing
// member (SDK-10).
func invalidParams(de *gen.DecodeError) *Error {
	data, _ := json.Marshal(struct {
		Path string `json:"path"`
	}{de.Path})
	return &Error{Code: CodeInvalidParams, Message: "invalid params: " + de.Error(), Data: data, cause: de}
}

// ClientSideOf is the client end of an ACP connection speaking one
// generated surface: this program is the client and the peer is an agent.
// P is the surface's agent peer (*gen.AgentPeer for stable v1). Inbound
// agent calls are dispatched to the surface's Client implementation (plus
// its optional handler interfaces); outgoing calls go through the typed
// [ClientSideOf.Agent] or, for extension and raw calls,
// [ClientSideOf.Call], [ClientSideOf.Go] and [ClientSideOf.Notify].
type ClientSideOf[P any] struct {
	*side
	agent P
}

// ClientSide is the client end of a stable v1 connection (package gen).
type ClientSide = ClientSideOf[*gen.AgentPeer]

// NewClientSide starts the client end of a connection reading the agent's
// output from r and writing to its input w. opts may be nil.
func NewClientSide(r io.Reader, w io.Writer, impl gen.Client, opts *SideOptions) *ClientSide {
	return NewClientSideOf(gen.Surface, r, w, impl, opts)
}

// NewClientSideOf is [NewClientSide] for any generated surface: sf is the
// surface package's Surface (gen.Surface, or that of an opt-in package
// such as v1 unstable) and impl its Client. Go does not infer the surface
// from a concrete impl, so pass impl as the package's Client interface
// (v1unstable.Client(&myClient{})). Strict mode reads that surface's
// capabilities with its table (see [SideOptions]).
func NewClientSideOf[A, C, AP, CP any](sf *surface.Surface[A, C, AP, CP], r io.Reader, w io.Writer, impl C, opts *SideOptions) *ClientSideOf[AP] {
	spec := surface.SpecOf(sf)
	c := &ClientSideOf[AP]{}
	c.side = newSide(spec, r, w, opts, true, func(ctx context.Context, req *Request) (any, error) {
		result, err := spec.DispatchClient(ctx, impl, req.Method, req.Params)
		return c.answer(ctx, impl, req, result, err)
	})
	c.agent = spec.NewAgentPeer(c)
	c.conn.run()
	return c
}

// StartAgent starts an agent subprocess and returns the client end of a
// connection over its stdin and stdout (see [StartCommand] for how to end
// it and reap the process).
func StartAgent(cmd *exec.Cmd, impl gen.Client, opts *SideOptions) (*ClientSide, error) {
	return StartAgentOf(gen.Surface, cmd, impl, opts)
}

// StartAgentOf is [StartAgent] for any generated surface (see
// [NewClientSideOf]).
func StartAgentOf[A, C, AP, CP any](sf *surface.Surface[A, C, AP, CP], cmd *exec.Cmd, impl C, opts *SideOptions) (*ClientSideOf[AP], error) {
	r, w, err := startPipes(cmd)
	if err != nil {
		return nil, err
	}
	return NewClientSideOf(sf, r, w, impl, opts), nil
}

// Agent returns the typed calls to the agent. They honour strict mode.
func (c *ClientSideOf[P]) Agent() P { return c.agent }

// AgentSideOf is the agent end of an ACP connection speaking one generated
// surface: this program is the agent and the peer is a client. P is the
// surface's client peer (*gen.ClientPeer for stable v1). Inbound client
// calls are dispatched to the surface's Agent implementation (plus its
// optional handler interfaces); outgoing calls go through the typed
// [AgentSideOf.Client] or [AgentSideOf.Call], [AgentSideOf.Go] and
// [AgentSideOf.Notify].
type AgentSideOf[P any] struct {
	*side
	client P
}

// AgentSide is the agent end of a stable v1 connection (package gen).
type AgentSide = AgentSideOf[*gen.ClientPeer]

// NewAgentSide starts the agent end of a connection reading the client's
// messages from r (usually os.Stdin) and writing to w (usually os.Stdout).
// opts may be nil.
func NewAgentSide(r io.Reader, w io.Writer, impl gen.Agent, opts *SideOptions) *AgentSide {
	return NewAgentSideOf(gen.Surface, r, w, impl, opts)
}

// NewAgentSideOf is [NewAgentSide] for any generated surface: sf is the
// surface package's Surface and impl its Agent (passed as that interface;
// see [NewClientSideOf]).
func NewAgentSideOf[A, C, AP, CP any](sf *surface.Surface[A, C, AP, CP], r io.Reader, w io.Writer, impl A, opts *SideOptions) *AgentSideOf[CP] {
	spec := surface.SpecOf(sf)
	a := &AgentSideOf[CP]{}
	a.side = newSide(spec, r, w, opts, false, func(ctx context.Context, req *Request) (any, error) {
		result, err := spec.DispatchAgent(ctx, impl, req.Method, req.Params)
		if err == nil && req.Method == methodInitialize && a.strict != nil {
			// What the client advertised gates this side's calls to it.
			a.strict.learnInitialize(req.Params)
		}
		return a.answer(ctx, impl, req, result, err)
	})
	a.client = spec.NewClientPeer(a)
	a.conn.run()
	return a
}

// Client returns the typed calls to the client. They honour strict mode.
func (a *AgentSideOf[P]) Client() P { return a.client }

// Interface checks: both sides are what the generated typed peers need.
var (
	_ gen.Caller     = (*Conn)(nil)
	_ gen.Caller     = (*ClientSide)(nil)
	_ gen.Caller     = (*AgentSide)(nil)
	_ surface.Caller = (*ClientSideOf[any])(nil)
	_ surface.Caller = (*AgentSideOf[any])(nil)
)
