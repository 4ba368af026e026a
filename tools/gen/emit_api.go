package main

import (
	"fmt"
	"strings"
)

// api prints api.go: Caller, the peers, the handler interfaces, the
// dispatchers and Surface.
func (e *emitter) api(g *printer) error {
	g.Text(`// Caller is what the typed peers need from a connection: a request that
// waits for its result, and a notification. acpsdk.Conn implements it.
type Caller interface {
	// Call sends a request and decodes its result into result (a pointer).
	Call(ctx context.Context, method string, params, result any) error
	// Notify sends a notification.
	Notify(ctx context.Context, method string, params any) error
}

// ErrNotImplemented is returned by DispatchAgent and DispatchClient when the
// method is not in the schema's table or the implementation lacks its
// optional handler interface; a connection answers it with -32601.
var ErrNotImplemented = errors.New("gen: method not implemented")
`)
	e.peer(g, "agent", "AgentPeer", "the agent", "client")
	e.peer(g, "client", "ClientPeer", "the client", "agent")
	for _, side := range e.m.extraSides() {
		e.peer(g, side, goName(side)+"Peer", "a "+side, "other")
	}
	e.handlers(g, "agent", "Agent")
	e.handlers(g, "client", "Client")
	for _, side := range e.m.extraSides() {
		e.handlers(g, side, goName(side))
	}
	e.surface(g)
	e.trustedResult(g)
	e.trustedParams(g)
	g.Text(decodeParams)
	return nil
}

// peer prints the typed peer of side: one method per method it handles.
func (e *emitter) peer(g *printer, side, name, who, caller string) {
	g.P(`// %[1]s calls the methods %[2]s handles, with typed params and results;
// the %[3]s side uses it to talk to %[2]s.
type %[1]s struct {
	c Caller
}

// New%[1]s wraps a connection.
func New%[1]s(c Caller) *%[1]s {
	return &%[1]s{c: c}
}
`, name, who, caller)
	for _, m := range e.m.Methods {
		if m.Side != side {
			continue
		}
		sig := fmt.Sprintf("func (p *%s) %s(ctx context.Context, params *%s)", name, m.GoMethod, m.Params.Name)
		switch {
		case m.Notification:
			g.P(`// %s sends the %s notification.
%s error {
	return p.c.Notify(ctx, %s, params)
}`, m.GoMethod, m.Name, sig, m.Const)
		case m.Result.Kind == TUnion:
			g.P(`// %[1]s calls %[2]s and waits for its result, one of %[3]s's variants.
%[4]s (%[3]s, error) {
	var raw json.RawMessage
	if err := p.c.Call(ctx, %[5]s, params, &raw); err != nil {
		return nil, err
	}
	return Unmarshal%[3]s(raw)
}`, m.GoMethod, m.Name, m.Result.Name, sig, m.Const)
		default:
			e.callHelper(g)
			g.P(`// %[1]s calls %[2]s and waits for its result.
%[3]s (*%[4]s, error) {
	return call(ctx, p.c, %[5]s, params, new(%[4]s))
}`, m.GoMethod, m.Name, sig, m.Result.Name, m.Const)
		}
		g.P("")
	}
}

// callHelper prints, once, what every typed request method of the peers
// does: call, the request, with its result decoded into r (a new value).
// Its type parameter is the result's pointer type, so that it is compiled
// once for them all.
func (e *emitter) callHelper(g *printer) {
	if e.haveCall {
		return
	}
	e.haveCall = true
	g.Text(`// call sends a request and waits for its result, decoded into r; nil on an error.
func call[P any](ctx context.Context, c Caller, method string, params any, r P) (P, error) {
	if err := c.Call(ctx, method, params, r); err != nil {
		var none P
		return none, err
	}
	return r, nil
}
`)
}

// handlers prints the handler side of side: the interface of its
// baseline methods (iface), an optional interface per other method, and
// its dispatchers.
func (e *emitter) handlers(g *printer, side, iface string) {
	g.P(`// %s is what every %s implementation handles: the baseline methods.
// Every other method has its own optional <Method>Handler interface, so a
// schema bump that adds a method adds an interface and breaks nobody.`, iface, side)
	var baseline []string
	for _, m := range e.m.Methods {
		if m.Side == side && isRequired(m) {
			baseline = append(baseline, fmt.Sprintf("// %s handles %s.\n%s\n", m.GoMethod, m.Name, handlerSig(m)))
		}
	}
	if len(baseline) == 0 {
		g.P("type %s interface{}\n", iface)
	} else {
		g.P("type %s interface {\n%s}\n", iface, strings.Join(baseline, ""))
	}
	for _, m := range e.m.Methods {
		if m.Side != side || isRequired(m) {
			continue
		}
		g.P(`// %[1]s is implemented by a%[2]s %[3]s that supports %[4]s.
type %[1]s interface {
	// %[5]s handles %[4]s.
	%[6]s
}
`, m.HandlerName(), article(side), side, m.Name, m.GoMethod, handlerSig(m))
	}
	e.dispatchers(g, side, iface)
}

// handlerSig is the interface method of a handler.
func handlerSig(m *Method) string {
	sig := fmt.Sprintf("%s(ctx context.Context, params *%s)", m.GoMethod, m.Params.Name)
	if m.Notification {
		return sig + " error"
	}
	return fmt.Sprintf("%s (%s, error)", sig, resultType(m))
}

// resultType is how a method's result is held: a pointer to its struct, or
// the union interface itself for a result that is a union.
func resultType(m *Method) string {
	if m.Result.Kind == TUnion {
		return m.Result.Name
	}
	return "*" + m.Result.Name
}

func article(s string) string {
	switch s[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "n"
	}
	return ""
}

// dispatchers prints Dispatch<Iface> (and Dispatch<Iface>Notification
// when a notification of side shares its wire name with a request of
// side), and their trusted forms.
func (e *emitter) dispatchers(g *printer, side, iface string) {
	requests := map[string]bool{}
	for _, m := range e.m.Methods {
		if m.Side == side && !m.Notification {
			requests[m.Name] = true
		}
	}
	var cases, notifCases []string
	for _, m := range e.m.Methods {
		switch {
		case m.Side != side:
		case m.Notification && requests[m.Name]:
			notifCases = append(notifCases, dispatchCase(m))
		default:
			cases = append(cases, dispatchCase(m))
		}
	}
	if len(notifCases) > 0 {
		notificationDispatcher(g, iface, notifCases)
	}
	g.P(`// Dispatch%[1]s decodes params for method, calls impl, and returns its result
// (nil for notifications). A params decode failure is a *DecodeError whose
// path starts with "params"; a method that is not in the table, or whose
// optional handler impl lacks, is ErrNotImplemented.
func Dispatch%[1]s(ctx context.Context, impl %[1]s, method string, params []byte) (any, error) {
	return dispatch%[1]s(ctx, impl, method, params, false)
}

// dispatch%[1]s is Dispatch%[1]s; trusted skips re-validating params that
// come from a line the connection already validated (see decodeParams).
func dispatch%[1]s(ctx context.Context, impl %[1]s, method string, params []byte, trusted bool) (any, error) {
	%[2]s
	return nil, ErrNotImplemented
}
`, iface, braced("switch method", cases))
}

// dispatchCase is a dispatcher's case for m: find the handler, decode the
// params, call it.
func dispatchCase(m *Method) string {
	var b strings.Builder
	h := "impl"
	fmt.Fprintf(&b, "case %s:\n", m.Const)
	if !isRequired(m) {
		h = "h"
		fmt.Fprintf(&b, "h, ok := impl.(%s)\nif !ok {\nreturn nil, ErrNotImplemented\n}\n", m.HandlerName())
	}
	fmt.Fprintf(&b, "var p %s\nif err := decodeParams(params, trusted, p.decodeAt); err != nil {\nreturn nil, err\n}\n", m.Params.Name)
	if m.Notification {
		fmt.Fprintf(&b, "return nil, %s.%s(ctx, &p)", h, m.GoMethod)
	} else {
		fmt.Fprintf(&b, `r, err := %s.%s(ctx, &p)
if err != nil || r == nil {
	// Never a typed nil inside the interface.
	return nil, err
}
return r, nil`, h, m.GoMethod)
	}
	return b.String()
}

// notificationDispatcher prints Dispatch<Iface>Notification for the
// notifications of a side whose wire name a request of that side also has
// (v1 unstable's proxy/successor): the connection knows which of the two a
// message is (it has an id or not), a dispatcher by name alone cannot.
func notificationDispatcher(g *printer, iface string, cases []string) {
	g.P(`// Dispatch%[1]sNotification dispatches the notifications whose wire name also names a
// request of this side, which Dispatch%[1]s takes as the request; other
// methods are ErrNotImplemented here.
func Dispatch%[1]sNotification(ctx context.Context, impl %[1]s, method string, params []byte) error {
	_, err := dispatch%[1]sNotification(ctx, impl, method, params, false)
	return err
}

// dispatch%[1]sNotification is Dispatch%[1]sNotification; trusted skips re-validating params.
func dispatch%[1]sNotification(ctx context.Context, impl %[1]s, method string, params []byte, trusted bool) (any, error) {
	%[2]s
	return nil, ErrNotImplemented
}
`, iface, braced("switch method", cases))
}

// surface prints Surface, the package's descriptor for acpsdk's generic
// sides: its trusted dispatchers and result decoder, its peers, and its
// method table's constructors (which strict mode decodes capabilities
// with). The trusted entry points stay unexported: the descriptor is
// opaque outside acpsdk.
func (e *emitter) surface(g *printer) {
	g.P(`// Surface describes this package to acpsdk: pass it to
// acpsdk.NewClientSideOf or acpsdk.NewAgentSideOf to speak this schema over
// an acpsdk connection, with strict mode reading this schema's
// capabilities. It is opaque: it carries the dispatchers that skip
// re-validating params the connection already validated, so users only
// ever get the validating DispatchAgent and DispatchClient.
var Surface = surface.New(surface.Spec[Agent, Client, *AgentPeer, *ClientPeer]{
	DispatchAgent: func(ctx context.Context, impl Agent, method string, params []byte) (any, error) {
		return dispatchAgent(ctx, impl, method, params, true)
	},
	DispatchClient: func(ctx context.Context, impl Client, method string, params []byte) (any, error) {
		return dispatchClient(ctx, impl, method, params, true)
	},
	NewAgentPeer: func(c surface.Caller) *AgentPeer {
		return NewAgentPeer(c)
	},
	NewClientPeer: func(c surface.Caller) *ClientPeer {
		return NewClientPeer(c)
	},
	NewParams:      newParams,
	NewResult:      newResult,
	NotImplemented: ErrNotImplemented,
	Params:         decodeTrustedParams,
	Result:         decodeTrustedResult,
	Schema:         %q,
})
`, e.m.Surface.File)
	for _, which := range []string{"Params", "Result"} {
		g.P(`// new%[1]s returns a new %[2]s value of method, nil when there is none.
func new%[1]s(method string) any {
	if m, ok := LookupMethod(method); ok && m.New%[1]s != nil {
		return m.New%[1]s()
	}
	return nil
}
`, which, strings.ToLower(which))
	}
}

// trustedResult prints decodeTrustedResult: a method's result decoded from
// a line the connection already validated, exactly as its UnmarshalJSON
// would after validating (reset, then decode), so a response is validated
// once, as params and notifications are. Results that are not objects are
// left to json.Unmarshal.
func (e *emitter) trustedResult(g *printer) {
	g.P(`// decodeTrustedResult decodes a validated result into a method's result
// type; ok is false for any other destination.
func decodeTrustedResult(data []byte, into any) (ok bool, err error) {`)
	var cases []string
	seen := map[string]bool{}
	for _, m := range e.m.Methods {
		r := m.Result
		if r != nil && r.Kind == TAlias {
			r = r.Alias // the same Go type: one case
		}
		if r == nil || r.Kind != TStruct || seen[r.Name] {
			continue
		}
		seen[r.Name] = true
		cases = append(cases, fmt.Sprintf("case *%[1]s:\n*x = %[1]s{}\nreturn true, jsonx.Length(x.decodeAt(data, nil))", r.Name))
	}
	g.P("%s\nreturn false, nil\n}\n", braced("switch x := into.(type)", cases))
}

// trustedParams prints decodeTrustedParams: a method's params decoded from
// a line the connection already validated, as the trusted dispatchers
// decode them (reset, then decodeParams), for a consumer that takes raw
// messages and decodes them itself (acpsdk's Request.DecodeParams).
func (e *emitter) trustedParams(g *printer) {
	g.P(`// decodeTrustedParams decodes validated params into a method's params
// type; ok is false for any other destination.
func decodeTrustedParams(data []byte, into any) (ok bool, err error) {`)
	var cases []string
	seen := map[string]bool{}
	for _, m := range e.m.Methods {
		p := m.Params
		if p != nil && p.Kind == TAlias {
			p = p.Alias // the same Go type: one case
		}
		if p == nil || p.Kind != TStruct || seen[p.Name] {
			continue
		}
		seen[p.Name] = true
		cases = append(cases, fmt.Sprintf("case *%[1]s:\n*x = %[1]s{}\nreturn true, decodeParams(data, true, x.decodeAt)", p.Name))
	}
	g.P("%s\nreturn false, nil\n}\n", braced("switch x := into.(type)", cases))
}

// decodeParams is the params decoder the dispatchers share.
const decodeParams = `// decodeParams decodes JSON-RPC params; absent or null params decode as {}
// so that required members are reported by name. Errors carry the path
// prefixed with "params".
//
// trusted params come from a line the connection already validated with
// jsonx's validator (nesting bound and UTF-8 included, the params counted
// from their own root, as here), so validating them again is skipped, and
// the decoded strings share them (the connection never writes a line it
// read again); other params are validated and copied first (jsonx.Own).
func decodeParams(params []byte, trusted bool, dec func([]byte, []string) (int, error)) error {
	if len(jsonx.TrimSpace(params)) == 0 || jsonx.IsNull(params) {
		params = []byte("{}")
	}
	if !trusted {
		if err := jsonx.Own(&params); err != nil {
			return jsonx.AtField(err, "params")
		}
	}
	if _, err := dec(params, nil); err != nil {
		return jsonx.AtField(err, "params")
	}
	return nil
}`
