package main

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

func sideConst(side string) string { return "Side" + goName(side) }

// extraSideConsts declares the sides beyond agent, client and protocol
// that the schema's x-side names (v1 unstable's proxy).
func (e *emitter) extraSideConsts() jen.Code {
	s := jen.Null()
	for _, side := range e.m.extraSides() {
		s.Comment(fmt.Sprintf("%s methods are handled by a %s (the schema's x-side %q).", sideConst(side), side, side)).Line()
		s.Id(sideConst(side)).Id("Side").Op("=").Lit(side).Line()
	}
	return s
}

// resultType is how a method's result is held: a pointer to its struct, or
// the union interface itself for a result that is a union.
func resultType(m *Method) *jen.Statement {
	if m.Result.Kind == TUnion {
		return jen.Id(m.Result.Name)
	}
	return jen.Op("*").Id(m.Result.Name)
}

// resultTarget is the type a method's result decodes into: its type, or
// raw JSON for a union (the typed call decodes that with Unmarshal<Union>).
func resultTarget(m *Method) *jen.Statement {
	if m.Result.Kind == TUnion {
		return jen.Qual(segJSON, "RawMessage")
	}
	return jen.Id(m.Result.Name)
}

// methodTable emits the method constants, Side, MethodInfo, Methods and
// LookupMethod.
func (e *emitter) methodTable(f *jen.File) {
	var consts []jen.Code
	for i, m := range e.m.Methods {
		kind := "request"
		if m.Notification {
			kind = "notification"
		}
		if i > 0 && e.m.Methods[i-1].Name == m.Name {
			continue // one constant per wire name
		}
		if m.Shared {
			other := e.m.Methods[i+1]
			consts = append(consts, jen.Comment(fmt.Sprintf("%s is the %s %s, handled by the %s side (params %s), and the %s of the same name handled by the %s side (params %s).", m.Const, kind, m.Name, m.Side, m.Params.Name, map[bool]string{true: "notification", false: "request"}[other.Notification], other.Side, other.Params.Name)).Line().
				Id(m.Const).Op("=").Lit(m.Name))
			continue
		}
		consts = append(consts, jen.Comment(fmt.Sprintf("%s is the %s %s, handled by the %s side (params %s).", m.Const, kind, m.Name, m.Side, m.Params.Name)).Line().
			Id(m.Const).Op("=").Lit(m.Name))
	}
	f.Comment("The protocol's method names, from the schema's x-method annotations.")
	f.Const().Defs(consts...)
	f.Line()
	f.Comment("Side says which peer handles a method (the schema's x-side).")
	f.Type().Id("Side").String()
	f.Line()
	f.Comment("The sides.")
	f.Const().Defs(
		jen.Comment("SideAgent methods are handled by the agent (the client calls them)."),
		jen.Id("SideAgent").Id("Side").Op("=").Lit("agent"),
		jen.Comment("SideClient methods are handled by the client (the agent calls them)."),
		jen.Id("SideClient").Id("Side").Op("=").Lit("client"),
		jen.Comment("SideProtocol methods belong to the connection itself ($/cancel_request)."),
		jen.Id("SideProtocol").Id("Side").Op("=").Lit("protocol"),
		e.extraSideConsts(),
	)
	f.Line()
	f.Comment("MethodInfo describes one method of the protocol.")
	f.Type().Id("MethodInfo").Struct(
		jen.Comment("Name is the wire name, e.g. \"session/prompt\"."),
		jen.Id("Name").String(),
		jen.Comment("Side is the peer that handles it."),
		jen.Id("Side").Id("Side"),
		jen.Comment("Notification is true when the method has no response."),
		jen.Id("Notification").Bool(),
		jen.Comment("NewParams returns a pointer to a new params value (e.g. *PromptRequest)."),
		jen.Id("NewParams").Func().Params().Any(),
		jen.Comment("NewResult returns a pointer to a new value to decode the method's result"),
		jen.Comment("into: its result type (e.g. *PromptResponse), or, for a result that is a"),
		jen.Comment("union (held as its interface, which nothing decodes into), a"),
		jen.Comment("*json.RawMessage that the union's Unmarshal function decodes, as the"),
		jen.Comment("typed call does. It is nil for notifications."),
		jen.Id("NewResult").Func().Params().Any(),
	)
	f.Line()
	var rows []jen.Code
	for _, m := range e.m.Methods {
		d := jen.Dict{
			jen.Id("Name"):      jen.Id(m.Const),
			jen.Id("Side"):      jen.Id(sideConst(m.Side)),
			jen.Id("NewParams"): jen.Func().Params().Any().Block(jen.Return(jen.New(jen.Id(m.Params.Name)))),
		}
		if m.Notification {
			d[jen.Id("Notification")] = jen.True()
		} else {
			d[jen.Id("NewResult")] = jen.Func().Params().Any().Block(jen.Return(jen.New(resultTarget(m))))
		}
		rows = append(rows, jen.Values(d))
	}
	f.Comment("Methods is every method of the schema, sorted by name.")
	f.Var().Id("Methods").Op("=").Index().Id("MethodInfo").Values(rows...)
	f.Line()
	f.Comment("LookupMethod finds a method by wire name.")
	f.Func().Id("LookupMethod").Params(jen.Id("name").String()).Params(jen.Id("MethodInfo"), jen.Bool()).Block(
		jen.List(jen.Id("i"), jen.Id("ok")).Op(":=").Qual("sort", "Find").Call(jen.Len(jen.Id("Methods")), jen.Func().Params(jen.Id("i").Int()).Int().Block(
			jen.Return(jen.Qual("strings", "Compare").Call(jen.Id("name"), jen.Id("Methods").Index(jen.Id("i")).Dot("Name"))),
		)),
		jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Id("MethodInfo").Values(), jen.False())),
		jen.Return(jen.Id("Methods").Index(jen.Id("i")), jen.True()),
	)
	if !e.m.SharedNames() {
		return
	}
	f.Line()
	f.Comment("LookupMethodOf finds the method of a wire name that side handles. Some wire")
	f.Comment("names here have a method on two sides; LookupMethod finds the first of them.")
	f.Func().Id("LookupMethodOf").Params(jen.Id("side").Id("Side"), jen.Id("name").String()).Params(jen.Id("MethodInfo"), jen.Bool()).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("m")).Op(":=").Range().Id("Methods")).Block(
			jen.If(jen.Id("m").Dot("Side").Op("==").Id("side").Op("&&").Id("m").Dot("Name").Op("==").Id("name")).Block(jen.Return(jen.Id("m"), jen.True())),
		),
		jen.Return(jen.Id("MethodInfo").Values(), jen.False()),
	)
}

// api emits Caller, the peers, the handler interfaces and the dispatchers.
func (e *emitter) api(f *jen.File) {
	ctx := jen.Qual("context", "Context")
	f.Comment("Caller is what the typed peers need from a connection: a request that")
	f.Comment("waits for its result, and a notification. acpsdk.Conn implements it.")
	f.Type().Id("Caller").Interface(
		jen.Comment("Call sends a request and decodes its result into result (a pointer)."),
		jen.Id("Call").Params(jen.Id("ctx").Add(ctx), jen.Id("method").String(), jen.List(jen.Id("params"), jen.Id("result")).Any()).Error(),
		jen.Comment("Notify sends a notification."),
		jen.Id("Notify").Params(jen.Id("ctx").Add(ctx), jen.Id("method").String(), jen.Id("params").Any()).Error(),
	)
	f.Line()
	f.Comment("ErrNotImplemented is returned by DispatchAgent and DispatchClient when the")
	f.Comment("method is not in the schema's table or the implementation lacks its")
	f.Comment("optional handler interface; a connection answers it with -32601.")
	f.Var().Id("ErrNotImplemented").Op("=").Qual("errors", "New").Call(jen.Lit("gen: method not implemented"))
	f.Line()
	e.peer(f, "agent", "AgentPeer", "the agent", "client")
	e.peer(f, "client", "ClientPeer", "the client", "agent")
	for _, side := range e.m.extraSides() {
		e.peer(f, side, goName(side)+"Peer", "a "+side, "other")
	}
	e.handlers(f, "agent", "Agent")
	e.handlers(f, "client", "Client")
	for _, side := range e.m.extraSides() {
		e.handlers(f, side, goName(side))
	}
	e.surface(f)
	e.trustedResult(f)
	e.decodeParams(f)
}

// decodeParams emits the params decoder the dispatchers share.
func (e *emitter) decodeParams(f *jen.File) {
	f.Comment("decodeParams decodes JSON-RPC params; absent or null params decode as {}")
	f.Comment("so that required members are reported by name. Errors carry the path")
	f.Comment("prefixed with \"params\".")
	f.Comment("")
	f.Comment("trusted params come from a line the connection already validated with")
	f.Comment("jsonx's validator (nesting bound and UTF-8 included, the params counted")
	f.Comment("from their own root, as here), so validating them again is skipped, and")
	f.Comment("the decoded strings share them (the connection never writes a line it")
	f.Comment("read again); other params are validated and copied first (jsonx.Own).")
	f.Func().Id("decodeParams").Params(jen.Id("params").Index().Byte(), jen.Id("trusted").Bool(), jen.Id("dec").Func().Params(jen.Index().Byte(), jen.Index().String()).Params(jen.Int(), jen.Error())).Error().Block(
		jen.If(jen.Len(jx("TrimSpace").Call(jen.Id("params"))).Op("==").Lit(0).Op("||").Add(jx("IsNull")).Call(jen.Id("params"))).Block(
			jen.Id("params").Op("=").Index().Byte().Call(jen.Lit("{}")),
		),
		jen.If(jen.Op("!").Id("trusted")).Block(
			jen.If(jen.Err().Op(":=").Add(jx("Own")).Call(jen.Op("&").Id("params")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jx("AtField").Call(jen.Err(), jen.Lit("params"))),
			),
		),
		jen.If(jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("dec").Call(jen.Id("params"), jen.Nil()), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jx("AtField").Call(jen.Err(), jen.Lit("params"))),
		),
		jen.Return(jen.Nil()),
	)
}

// surface emits Surface, the package's descriptor for acpsdk's generic
// sides: its trusted dispatchers and result decoder, its peers, and its
// method table's constructors (which strict mode decodes capabilities
// with). The trusted entry points stay unexported: the descriptor is
// opaque outside acpsdk.
func (e *emitter) surface(f *jen.File) {
	ctx := jen.Qual("context", "Context")
	trustedDispatch := func(iface string) jen.Code {
		return jen.Func().Params(jen.Id("ctx").Add(ctx), jen.Id("impl").Id(iface), jen.Id("method").String(), jen.Id("params").Index().Byte()).Params(jen.Any(), jen.Error()).Block(
			jen.Return(jen.Id("dispatch"+iface).Call(jen.Id("ctx"), jen.Id("impl"), jen.Id("method"), jen.Id("params"), jen.True())),
		)
	}
	newPeer := func(name string) jen.Code {
		return jen.Func().Params(jen.Id("c").Qual(descriptorPkg, "Caller")).Op("*").Id(name).Block(
			jen.Return(jen.Id("New" + name).Call(jen.Id("c"))),
		)
	}
	f.Comment("Surface describes this package to acpsdk: pass it to")
	f.Comment("acpsdk.NewClientSideOf or acpsdk.NewAgentSideOf to speak this schema over")
	f.Comment("an acpsdk connection, with strict mode reading this schema's")
	f.Comment("capabilities. It is opaque: it carries the dispatchers that skip")
	f.Comment("re-validating params the connection already validated, so users only")
	f.Comment("ever get the validating DispatchAgent and DispatchClient.")
	f.Var().Id("Surface").Op("=").Qual(descriptorPkg, "New").Call(
		jen.Qual(descriptorPkg, "Spec").Types(jen.Id("Agent"), jen.Id("Client"), jen.Op("*").Id("AgentPeer"), jen.Op("*").Id("ClientPeer")).Values(jen.Dict{
			jen.Id("Schema"):         jen.Lit(e.m.Surface.File),
			jen.Id("NotImplemented"): jen.Id("ErrNotImplemented"),
			jen.Id("DispatchAgent"):  trustedDispatch("Agent"),
			jen.Id("DispatchClient"): trustedDispatch("Client"),
			jen.Id("NewAgentPeer"):   newPeer("AgentPeer"),
			jen.Id("NewClientPeer"):  newPeer("ClientPeer"),
			jen.Id("NewParams"):      jen.Id("newParams"),
			jen.Id("NewResult"):      jen.Id("newResult"),
			jen.Id("Result"):         jen.Id("decodeTrustedResult"),
		}),
	)
	f.Line()
	for _, which := range []string{"Params", "Result"} {
		f.Comment(fmt.Sprintf("new%s returns a new %s value of method, nil when there is none.", which, lowerFirst(which)))
		f.Func().Id("new"+which).Params(jen.Id("method").String()).Any().Block(
			jen.If(jen.List(jen.Id("m"), jen.Id("ok")).Op(":=").Id("LookupMethod").Call(jen.Id("method")), jen.Id("ok").Op("&&").Id("m").Dot("New"+which).Op("!=").Nil()).Block(
				jen.Return(jen.Id("m").Dot("New"+which).Call()),
			),
			jen.Return(jen.Nil()),
		)
		f.Line()
	}
}

func lowerFirst(s string) string { return string(s[0]|0x20) + s[1:] }

func (e *emitter) peer(f *jen.File, side, name, who, caller string) {
	f.Comment(fmt.Sprintf("%s calls the methods %s handles, with typed params and results;", name, who))
	f.Comment(fmt.Sprintf("the %s side uses it to talk to %s.", caller, who))
	f.Type().Id(name).Struct(jen.Id("c").Id("Caller"))
	f.Line()
	f.Comment(fmt.Sprintf("New%s wraps a connection.", name))
	f.Func().Id("New" + name).Params(jen.Id("c").Id("Caller")).Op("*").Id(name).Block(
		jen.Return(jen.Op("&").Id(name).Values(jen.Dict{jen.Id("c"): jen.Id("c")})),
	)
	f.Line()
	ctx := jen.Qual("context", "Context")
	for _, m := range e.m.Methods {
		if m.Side != side {
			continue
		}
		if m.Notification {
			f.Comment(fmt.Sprintf("%s sends the %s notification.", m.GoMethod, m.Name))
			f.Func().Params(jen.Id("p").Op("*").Id(name)).Id(m.GoMethod).Params(jen.Id("ctx").Add(ctx), jen.Id("params").Op("*").Id(m.Params.Name)).Error().Block(
				jen.Return(jen.Id("p").Dot("c").Dot("Notify").Call(jen.Id("ctx"), jen.Id(m.Const), jen.Id("params"))),
			)
		} else if m.Result.Kind == TUnion {
			f.Comment(fmt.Sprintf("%s calls %s and waits for its result, one of %s's variants.", m.GoMethod, m.Name, m.Result.Name))
			f.Func().Params(jen.Id("p").Op("*").Id(name)).Id(m.GoMethod).Params(jen.Id("ctx").Add(ctx), jen.Id("params").Op("*").Id(m.Params.Name)).Params(jen.Id(m.Result.Name), jen.Error()).Block(
				jen.Var().Id("raw").Qual(segJSON, "RawMessage"),
				jen.If(jen.Err().Op(":=").Id("p").Dot("c").Dot("Call").Call(jen.Id("ctx"), jen.Id(m.Const), jen.Id("params"), jen.Op("&").Id("raw")), jen.Err().Op("!=").Nil()).Block(
					jen.Return(jen.Nil(), jen.Err()),
				),
				jen.Return(jen.Id("Unmarshal"+m.Result.Name).Call(jen.Id("raw"))),
			)
		} else {
			e.callHelper(f)
			f.Comment(fmt.Sprintf("%s calls %s and waits for its result.", m.GoMethod, m.Name))
			f.Func().Params(jen.Id("p").Op("*").Id(name)).Id(m.GoMethod).Params(jen.Id("ctx").Add(ctx), jen.Id("params").Op("*").Id(m.Params.Name)).Params(jen.Op("*").Id(m.Result.Name), jen.Error()).Block(
				jen.Return(jen.Id("call").Call(jen.Id("ctx"), jen.Id("p").Dot("c"), jen.Id(m.Const), jen.Id("params"), jen.New(jen.Id(m.Result.Name)))),
			)
		}
		f.Line()
	}
}

// callHelper emits, once, what every typed request method of the peers
// does: call, the request, with its result decoded into r (a new value).
// Its type parameter is the result's pointer type, so that it is compiled
// once for them all.
func (e *emitter) callHelper(f *jen.File) {
	if e.haveCall {
		return
	}
	e.haveCall = true
	f.Comment("call sends a request and waits for its result, decoded into r; nil on an error.")
	f.Func().Id("call").Types(jen.Id("P").Any()).Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("c").Id("Caller"), jen.Id("method").String(), jen.Id("params").Any(), jen.Id("r").Id("P")).Params(jen.Id("P"), jen.Error()).Block(
		jen.If(jen.Err().Op(":=").Id("c").Dot("Call").Call(jen.Id("ctx"), jen.Id("method"), jen.Id("params"), jen.Id("r")), jen.Err().Op("!=").Nil()).Block(
			jen.Var().Id("none").Id("P"),
			jen.Return(jen.Id("none"), jen.Err()),
		),
		jen.Return(jen.Id("r"), jen.Nil()),
	)
	f.Line()
}

// handlerSig is the interface method of a handler.
func handlerSig(m *Method) *jen.Statement {
	ctx := jen.Qual("context", "Context")
	s := jen.Id(m.GoMethod).Params(jen.Id("ctx").Add(ctx), jen.Id("params").Op("*").Id(m.Params.Name))
	if m.Notification {
		return s.Error()
	}
	return s.Params(resultType(m), jen.Error())
}

func (e *emitter) handlers(f *jen.File, side, iface string) {
	var req []jen.Code
	for _, m := range e.m.Methods {
		if m.Side == side && isRequired(m) {
			req = append(req, jen.Comment(fmt.Sprintf("%s handles %s.", m.GoMethod, m.Name)), handlerSig(m))
		}
	}
	f.Comment(fmt.Sprintf("%s is what every %s implementation handles: the baseline methods.", iface, side))
	f.Comment("Every other method has its own optional <Method>Handler interface, so a")
	f.Comment("schema bump that adds a method adds an interface and breaks nobody.")
	f.Type().Id(iface).Interface(req...)
	f.Line()
	for _, m := range e.m.Methods {
		if m.Side != side || isRequired(m) {
			continue
		}
		name := m.HandlerName()
		f.Comment(fmt.Sprintf("%s is implemented by a%s %s that supports %s.", name, article(side), side, m.Name))
		f.Type().Id(name).Interface(jen.Comment(fmt.Sprintf("%s handles %s.", m.GoMethod, m.Name)), handlerSig(m))
		f.Line()
	}
	ctx := jen.Qual("context", "Context")
	var cases, notifCases []jen.Code
	requests := map[string]bool{}
	for _, m := range e.m.Methods {
		if m.Side == side && !m.Notification {
			requests[m.Name] = true
		}
	}
	for _, m := range e.m.Methods {
		if m.Side != side {
			continue
		}
		var body []jen.Code
		h := jen.Id("impl")
		if !isRequired(m) {
			body = append(body,
				jen.List(jen.Id("h"), jen.Id("ok")).Op(":=").Id("impl").Assert(jen.Id(m.HandlerName())),
				jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Nil(), jen.Id("ErrNotImplemented"))),
			)
			h = jen.Id("h")
		}
		body = append(body,
			jen.Var().Id("p").Id(m.Params.Name),
			jen.If(jen.Err().Op(":=").Id("decodeParams").Call(jen.Id("params"), jen.Id("trusted"), jen.Id("p").Dot("decodeAt")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Nil(), jen.Err()),
			),
		)
		if m.Notification {
			body = append(body, jen.Return(jen.Nil(), h.Dot(m.GoMethod).Call(jen.Id("ctx"), jen.Op("&").Id("p"))))
		} else {
			body = append(body,
				jen.List(jen.Id("r"), jen.Err()).Op(":=").Add(h.Clone()).Dot(m.GoMethod).Call(jen.Id("ctx"), jen.Op("&").Id("p")),
				jen.If(jen.Err().Op("!=").Nil().Op("||").Id("r").Op("==").Nil()).Block(
					jen.Comment("Never a typed nil inside the interface."),
					jen.Return(jen.Nil(), jen.Err()),
				),
				jen.Return(jen.Id("r"), jen.Nil()),
			)
		}
		if m.Notification && requests[m.Name] {
			notifCases = append(notifCases, jen.Case(jen.Id(m.Const)).Block(body...))
			continue
		}
		cases = append(cases, jen.Case(jen.Id(m.Const)).Block(body...))
	}
	name := "Dispatch" + iface
	lower := "dispatch" + iface
	if len(notifCases) > 0 {
		e.notificationDispatcher(f, iface, notifCases)
	}
	f.Comment(fmt.Sprintf("%s decodes params for method, calls impl, and returns its result", name))
	f.Comment("(nil for notifications). A params decode failure is a *DecodeError whose")
	f.Comment("path starts with \"params\"; a method that is not in the table, or whose")
	f.Comment("optional handler impl lacks, is ErrNotImplemented.")
	f.Func().Id(name).Params(jen.Id("ctx").Add(ctx), jen.Id("impl").Id(iface), jen.Id("method").String(), jen.Id("params").Index().Byte()).Params(jen.Any(), jen.Error()).Block(
		jen.Return(jen.Id(lower).Call(jen.Id("ctx"), jen.Id("impl"), jen.Id("method"), jen.Id("params"), jen.False())),
	)
	f.Line()
	f.Comment(fmt.Sprintf("%s is %s; trusted skips re-validating params that", lower, name))
	f.Comment("come from a line the connection already validated (see decodeParams).")
	f.Func().Id(lower).Params(jen.Id("ctx").Add(ctx), jen.Id("impl").Id(iface), jen.Id("method").String(), jen.Id("params").Index().Byte(), jen.Id("trusted").Bool()).Params(jen.Any(), jen.Error()).Block(
		jen.Switch(jen.Id("method")).Block(cases...),
		jen.Return(jen.Nil(), jen.Id("ErrNotImplemented")),
	)
	f.Line()
}

// notificationDispatcher emits Dispatch<Iface>Notification for the
// notifications of a side whose wire name a request of that side also has
// (v1 unstable's proxy/successor): the connection knows which of the two a
// message is (it has an id or not), a dispatcher by name alone cannot.
func (e *emitter) notificationDispatcher(f *jen.File, iface string, cases []jen.Code) {
	ctx := jen.Qual("context", "Context")
	name := "Dispatch" + iface + "Notification"
	lower := "dispatch" + iface + "Notification"
	f.Comment(fmt.Sprintf("%s dispatches the notifications whose wire name also names a", name))
	f.Comment(fmt.Sprintf("request of this side, which Dispatch%s takes as the request; other", iface))
	f.Comment("methods are ErrNotImplemented here.")
	f.Func().Id(name).Params(jen.Id("ctx").Add(ctx), jen.Id("impl").Id(iface), jen.Id("method").String(), jen.Id("params").Index().Byte()).Error().Block(
		jen.List(jen.Id("_"), jen.Err()).Op(":=").Id(lower).Call(jen.Id("ctx"), jen.Id("impl"), jen.Id("method"), jen.Id("params"), jen.False()),
		jen.Return(jen.Err()),
	)
	f.Line()
	f.Comment(fmt.Sprintf("%s is %s; trusted skips re-validating params.", lower, name))
	f.Func().Id(lower).Params(jen.Id("ctx").Add(ctx), jen.Id("impl").Id(iface), jen.Id("method").String(), jen.Id("params").Index().Byte(), jen.Id("trusted").Bool()).Params(jen.Any(), jen.Error()).Block(
		jen.Switch(jen.Id("method")).Block(cases...),
		jen.Return(jen.Nil(), jen.Id("ErrNotImplemented")),
	)
	f.Line()
}

func article(s string) string {
	switch s[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "n"
	}
	return ""
}

// trustedResult emits decodeTrustedResult: a method's result decoded from
// a line the connection already validated, exactly as its UnmarshalJSON
// would after validating (reset, then decode), so a response is validated
// once, as params and notifications are. Results that are not objects are
// left to json.Unmarshal.
func (e *emitter) trustedResult(f *jen.File) {
	var cases []jen.Code
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
		cases = append(cases, jen.Case(jen.Op("*").Id(r.Name)).Block(
			jen.Op("*").Id("x").Op("=").Id(r.Name).Values(),
			jen.Return(jen.True(), jx("Length").Call(jen.Id("x").Dot("decodeAt").Call(jen.Id("data"), jen.Nil()))),
		))
	}
	f.Comment("decodeTrustedResult decodes a validated result into a method's result")
	f.Comment("type; ok is false for any other destination.")
	f.Func().Id("decodeTrustedResult").Params(jen.Id("data").Index().Byte(), jen.Id("into").Any()).Params(jen.Id("ok").Bool(), jen.Err().Error()).Block(
		jen.Switch(jen.Id("x").Op(":=").Id("into").Assert(jen.Type())).Block(cases...),
		jen.Return(jen.False(), jen.Nil()),
	)
	f.Line()
}
