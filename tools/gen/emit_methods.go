package main

import (
	"fmt"
	"strings"
)

// methodTable prints methods.go: the method constants, Side, MethodInfo,
// Methods and LookupMethod (and LookupMethodOf when a wire name has a
// method on two sides).
func (e *emitter) methodTable(g *printer) error {
	g.P("// The protocol's method names, from the schema's x-method annotations.\nconst (")
	for i, m := range e.m.Methods {
		if i > 0 && e.m.Methods[i-1].Name == m.Name {
			continue // one constant per wire name
		}
		doc := fmt.Sprintf("%s is the %s %s, handled by the %s side (params %s)", m.Const, methodKind(m), m.Name, m.Side, m.Params.Name)
		if m.Shared {
			other := e.m.Methods[i+1]
			doc += fmt.Sprintf(", and the %s of the same name handled by the %s side (params %s)", methodKind(other), other.Side, other.Params.Name)
		}
		g.P("// %s.\n%s = %q", doc, m.Const, m.Name)
	}
	g.P(`)

// Side says which peer handles a method (the schema's x-side).
type Side string

// The sides.
const (
	// SideAgent methods are handled by the agent (the client calls them).
	SideAgent Side = "agent"
	// SideClient methods are handled by the client (the agent calls them).
	SideClient Side = "client"
	// SideProtocol methods belong to the connection itself ($/cancel_request).
	SideProtocol Side = "protocol"`)
	for _, side := range e.m.extraSides() {
		g.P("// %s methods are handled by a %s (the schema's x-side %q).\n%[1]s Side = %[3]q", sideConst(side), side, side)
	}
	g.P(")\n")
	g.Text(methodInfoDecl)
	var rows []string
	for _, m := range e.m.Methods {
		result := "Notification: true,"
		if !m.Notification {
			result = fmt.Sprintf("NewResult: func() any {\nreturn new(%s)\n},", resultTarget(m))
		}
		rows = append(rows, fmt.Sprintf("{\nName: %s,\nNewParams: func() any {\nreturn new(%s)\n},\n%s\nSide: %s,\n}",
			m.Const, m.Params.Name, result, sideConst(m.Side)))
	}
	g.P("\n// Methods is every method of the schema, sorted by name.\nvar Methods = []MethodInfo{%s}\n", strings.Join(rows, ", "))
	g.Text(lookupMethod)
	if e.m.SharedNames() {
		g.Text(lookupMethodOf)
	}
	return nil
}

func methodKind(m *Method) string {
	if m.Notification {
		return "notification"
	}
	return "request"
}

func sideConst(side string) string { return "Side" + goName(side) }

// resultTarget is the type a method's result decodes into: its type, or
// raw JSON for a union (the typed call decodes that with Unmarshal<Union>).
func resultTarget(m *Method) string {
	if m.Result.Kind == TUnion {
		return "json.RawMessage"
	}
	return m.Result.Name
}

const methodInfoDecl = `// MethodInfo describes one method of the protocol.
type MethodInfo struct {
	// Name is the wire name, e.g. "session/prompt".
	Name string
	// Side is the peer that handles it.
	Side Side
	// Notification is true when the method has no response.
	Notification bool
	// NewParams returns a pointer to a new params value (e.g. *PromptRequest).
	NewParams func() any
	// NewResult returns a pointer to a new value to decode the method's result
	// into: its result type (e.g. *PromptResponse), or, for a result that is a
	// union (held as its interface, which nothing decodes into), a
	// *json.RawMessage that the union's Unmarshal function decodes, as the
	// typed call does. It is nil for notifications.
	NewResult func() any
}
`

const lookupMethod = `// LookupMethod finds a method by wire name.
func LookupMethod(name string) (MethodInfo, bool) {
	i, ok := sort.Find(len(Methods), func(i int) int {
		return strings.Compare(name, Methods[i].Name)
	})
	if !ok {
		return MethodInfo{}, false
	}
	return Methods[i], true
}
`

const lookupMethodOf = `
// LookupMethodOf finds the method of a wire name that side handles. Some wire
// names here have a method on two sides; LookupMethod finds the first of them.
func LookupMethodOf(side Side, name string) (MethodInfo, bool) {
	for _, m := range Methods {
		if m.Side == side && m.Name == name {
			return m, true
		}
	}
	return MethodInfo{}, false
}
`
