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
	// it nothing.
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

// side is what ClientSide and AgentSide share: the connection, strict mode,
// and the mapping of the generated dispatch onto JSON-RPC answers.
type side struct {
	conn   *Conn
	strict bool
	peer   peerState
	// peerIsAgent selects the capability table for outgoing calls.
	peerIsAgent bool
}

// newSide builds a side whose connection is not started yet: the caller
// finishes wiring (handlers read the side's fields) and then calls
// s.conn.run.
func newSide(r io.Reader, w io.Writer, opts *SideOptions, peerIsAgent bool, dispatch func(context.Context, *Request) (any, error)) *side {
	var so SideOptions
	if opts != nil {
		so = *opts
	}
	s := &side{strict: so.Strict, peerIsAgent: peerIsAgent}
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
	if !s.strict || isExtension(method) {
		return params, nil
	}
	if s.peerIsAgent {
		return s.peer.checkAgentCall(method, params)
	}
	return s.peer.checkClientCall(method, params)
}

// call sends a request, learning the peer's capabilities from the answers
// that carry them when strict mode needs them.
func (s *side) call(ctx context.Context, method string, params, result any) error {
	params, err := s.check(method, params)
	if err != nil {
		return err
	}
	learn := s.strict && s.peerIsAgent && (method == gen.MethodInitialize || isSessionSetup(method))
	if !learn {
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
	if method == gen.MethodInitialize {
		// One decode serves strict mode and a typed result.
		res, err := s.peer.learnAgent(raw)
		if r, ok := result.(*gen.InitializeResponse); ok {
			if err != nil {
				return fmt.Errorf("acpsdk: decoding %s result: %w", method, err)
			}
			*r = *res
			return nil
		}
	} else {
		s.peer.learnSession(method, rawParams, raw)
	}
	if result == nil {
		return nil
	}
	if r, ok := result.(*json.RawMessage); ok {
		*r = raw
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("acpsdk: decoding %s result: %w", method, err)
	}
	return nil
}

func (s *side) goCall(ctx context.Context, method string, params any) (*PendingCall, error) {
	params, err := s.check(method, params)
	if err != nil {
		return nil, err
	}
	return s.conn.Go(ctx, method, params)
}

func (s *side) notify(ctx context.Context, method string, params any) error {
	params, err := s.check(method, params)
	if err != nil {
		return err
	}
	return s.conn.Notify(ctx, method, params)
}

// answer maps the generated dispatch's outcome onto the wire: a method the
// implementation lacks is -32601 (after offering extensions to an
// ExtensionHandler), params that do not decode are -32602 with the JSON
// path, and an empty typed result is sent as {} rather than null.
func answer(ctx context.Context, impl any, req *Request, result any, err error) (any, error) {
	if errors.Is(err, gen.ErrNotImplemented) {
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

// ClientSide is the client end of an ACP connection: this program is the
// client and the peer is an agent. Inbound agent calls are dispatched to a
// gen.Client implementation (plus its optional handler interfaces); outgoing
// calls go through the typed [ClientSide.Agent] or, for extension and raw
// calls, [ClientSide.Call], [ClientSide.Go] and [ClientSide.Notify].
type ClientSide struct {
	s     *side
	impl  gen.Client
	agent *gen.AgentPeer
}

// NewClientSide starts the client end of a connection reading the agent's
// output from r and writing to its input w. opts may be nil.
func NewClientSide(r io.Reader, w io.Writer, impl gen.Client, opts *SideOptions) *ClientSide {
	c := &ClientSide{impl: impl}
	c.s = newSide(r, w, opts, true, c.dispatch)
	c.agent = gen.NewAgentPeer(c)
	c.s.conn.run()
	return c
}

// StartAgent starts an agent subprocess and returns the client end of a
// connection over its stdin and stdout (see [StartCommand] for how to end
// it and reap the process).
func StartAgent(cmd *exec.Cmd, impl gen.Client, opts *SideOptions) (*ClientSide, error) {
	r, w, err := startPipes(cmd)
	if err != nil {
		return nil, err
	}
	return NewClientSide(r, w, impl, opts), nil
}

func (c *ClientSide) dispatch(ctx context.Context, req *Request) (any, error) {
	result, err := dispatchClientTrusted(ctx, c.impl, req.Method, req.Params)
	return answer(ctx, c.impl, req, result, err)
}

// Agent returns the typed calls to the agent. They honour strict mode.
func (c *ClientSide) Agent() *gen.AgentPeer { return c.agent }

// Conn returns the underlying connection (Flush, WriteRaw, Done, ...).
// Calls made on it directly bypass strict mode.
func (c *ClientSide) Conn() *Conn { return c.s.conn }

// Call sends any request (an extension method such as "_vendor/x", or a
// method by name) and decodes its result; see [Conn.Call]. It honours
// strict mode.
func (c *ClientSide) Call(ctx context.Context, method string, params, result any) error {
	return c.s.call(ctx, method, params, result)
}

// Go sends a request without waiting for its answer; see [Conn.Go]. It
// honours strict mode. The adapter uses it for session/prompt, whose answer
// it still needs after sending session/cancel.
func (c *ClientSide) Go(ctx context.Context, method string, params any) (*PendingCall, error) {
	return c.s.goCall(ctx, method, params)
}

// Notify sends a notification; see [Conn.Notify]. It honours strict mode.
func (c *ClientSide) Notify(ctx context.Context, method string, params any) error {
	return c.s.notify(ctx, method, params)
}

// Close closes the connection; see [Conn.Close].
func (c *ClientSide) Close() error { return c.s.conn.Close() }

// Done is closed when the connection has ended; see [Conn.Done].
func (c *ClientSide) Done() <-chan struct{} { return c.s.conn.Done() }

// Err says why the connection ended; see [Conn.Err].
func (c *ClientSide) Err() error { return c.s.conn.Err() }

// AgentSide is the agent end of an ACP connection: this program is the
// agent and the peer is a client. Inbound client calls are dispatched to a
// gen.Agent implementation (plus its optional handler interfaces);
// outgoing calls go through the typed [AgentSide.Client] or
// [AgentSide.Call], [AgentSide.Go] and [AgentSide.Notify].
type AgentSide struct {
	s      *side
	impl   gen.Agent
	client *gen.ClientPeer
}

// NewAgentSide starts the agent end of a connection reading the client's
// messages from r (usually os.Stdin) and writing to w (usually os.Stdout).
// opts may be nil.
func NewAgentSide(r io.Reader, w io.Writer, impl gen.Agent, opts *SideOptions) *AgentSide {
	a := &AgentSide{impl: impl}
	a.s = newSide(r, w, opts, false, a.dispatch)
	a.client = gen.NewClientPeer(a)
	a.s.conn.run()
	return a
}

func (a *AgentSide) dispatch(ctx context.Context, req *Request) (any, error) {
	result, err := dispatchAgentTrusted(ctx, a.impl, req.Method, req.Params)
	if err == nil && req.Method == gen.MethodInitialize {
		// What the client advertised gates this side's calls to it.
		a.s.peer.learnClient(req.Params)
	}
	return answer(ctx, a.impl, req, result, err)
}

// Client returns the typed calls to the client. They honour strict mode.
func (a *AgentSide) Client() *gen.ClientPeer { return a.client }

// Conn returns the underlying connection. Calls made on it directly bypass
// strict mode.
func (a *AgentSide) Conn() *Conn { return a.s.conn }

// Call sends any request to the client and decodes its result; see
// [Conn.Call]. It honours strict mode.
func (a *AgentSide) Call(ctx context.Context, method string, params, result any) error {
	return a.s.call(ctx, method, params, result)
}

// Go sends a request without waiting for its answer; see [Conn.Go].
func (a *AgentSide) Go(ctx context.Context, method string, params any) (*PendingCall, error) {
	return a.s.goCall(ctx, method, params)
}

// Notify sends a notification to the client; see [Conn.Notify]. It honours
// strict mode.
func (a *AgentSide) Notify(ctx context.Context, method string, params any) error {
	return a.s.notify(ctx, method, params)
}

// Close closes the connection; see [Conn.Close].
func (a *AgentSide) Close() error { return a.s.conn.Close() }

// Done is closed when the connection has ended; see [Conn.Done].
func (a *AgentSide) Done() <-chan struct{} { return a.s.conn.Done() }

// Err says why the connection ended; see [Conn.Err].
func (a *AgentSide) Err() error { return a.s.conn.Err() }

// Interface checks: both sides are what the generated typed peers need.
var (
	_ gen.Caller = (*Conn)(nil)
	_ gen.Caller = (*ClientSide)(nil)
	_ gen.Caller = (*AgentSide)(nil)
)
