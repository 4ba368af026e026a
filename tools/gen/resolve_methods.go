package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// overrides is the one table of hand decisions. Each entry says why; an
// entry that generation does not use is an error, so the table cannot rot.
var overrides = map[string]string{
	// Go method for session/update's params. The suffix rule (def name
	// minus "Request"/"Notification") would give "Session", which names
	// nothing; the method is session/update.
	"method:SessionNotification": "SessionUpdate",
}

// requiredMethods are the methods every implementation must handle, by
// side and wire name (the names are the same in v1 and v2). The schema has
// no "baseline" marker, so this small table says which methods are
// baseline per the protocol (§4 of protocol.md); every other method gets
// its own optional one-method interface. Checked: an entry that names no
// method of a surface's schema fails generation.
var requiredMethods = map[string][]string{
	"agent":  {"initialize", "session/new", "session/prompt", "session/cancel"},
	"client": {"session/update", "session/request_permission"},
}

func (r *resolver) override(key string) (string, bool) {
	v, ok := overrides[key]
	if ok {
		r.used[key] = true
	}
	return v, ok
}

// checkOverrides fails on an override entry that no surface's schema
// used.
func checkOverrides(models []*Model) error {
	var unused []string
	for k := range overrides {
		used := false
		for _, m := range models {
			used = used || m.usedOverrides[k]
		}
		if !used {
			unused = append(unused, k)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		return fmt.Errorf("unused override entries: %s", strings.Join(unused, ", "))
	}
	return nil
}

// methods builds the method table from x-method/x-side.
func (r *resolver) methods() error {
	byName := map[string]*Method{}
	for _, name := range r.sf.order {
		n := r.sf.defs[name]
		wire, side := n.str("x-method"), n.str("x-side")
		if wire == "" && side == "" {
			continue
		}
		if wire == "" || side == "" {
			return fmt.Errorf("%s: x-method and x-side must come together", n.path)
		}
		if !sidePattern.MatchString(side) {
			return fmt.Errorf("%s: x-side %q is not a lower-case word", n.path, side)
		}
		t := r.m.defs[name]
		obj := t.Kind == TStruct || (t.Kind == TAlias && t.Alias.Kind == TStruct)
		// A result may also be a union decided by shape (v1 unstable's
		// MessageMcpResponse: a result or an error), held as the union's
		// interface, or any JSON value (ProxySuccessorResponse).
		result := strings.HasSuffix(name, "Response") &&
			((t.Kind == TUnion && t.Union.Tag == "" && !t.Union.Flattened) || t.Kind == TRaw)
		if !obj && !result {
			return fmt.Errorf("%s: method params must be an object, a result an object, a shape union or any value", n.path)
		}
		// A method is a wire name on one side; two sides may share a wire
		// name (v1 unstable's mcp/message: a request the client handles, a
		// notification the agent handles).
		// and one side may have both a request and a notification of one
		// name (proxy/successor), told apart on the wire by the id.
		key := wire + " " + side
		if strings.HasSuffix(name, "Notification") {
			key += " notification"
		}
		m := byName[key]
		if m == nil {
			m = &Method{Name: wire, Side: side, Const: "Method" + goName(wire)}
			byName[key] = m
		}
		switch {
		case strings.HasSuffix(name, "Response"):
			if m.Result != nil {
				return fmt.Errorf("%s: two results for %s", n.path, wire)
			}
			m.Result = t
		case strings.HasSuffix(name, "Request"), strings.HasSuffix(name, "Notification"):
			if m.Params != nil {
				return fmt.Errorf("%s: two params for %s", n.path, wire)
			}
			m.Params = t
			gm := strings.TrimSuffix(strings.TrimSuffix(name, "Request"), "Notification")
			if o, ok := r.override("method:" + name); ok {
				gm = o
			}
			m.GoMethod = goName(gm)
		default:
			return fmt.Errorf("%s: cannot tell params from result by name", n.path)
		}
	}
	for _, m := range byName {
		if m.Params == nil {
			return fmt.Errorf("method %s has no params def", m.Name)
		}
		m.Notification = m.Result == nil
		if m.Notification != strings.HasSuffix(m.Params.Schema, "Notification") {
			return fmt.Errorf("method %s: params %s and result disagree on notification", m.Name, m.Params.Schema)
		}
		r.m.Methods = append(r.m.Methods, m)
	}
	sort.Slice(r.m.Methods, func(i, j int) bool {
		a, b := r.m.Methods[i], r.m.Methods[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Side != b.Side {
			return a.Side < b.Side
		}
		return !a.Notification && b.Notification // the request first
	})
	requests := map[string]bool{}
	for i, m := range r.m.Methods {
		if i > 0 && r.m.Methods[i-1].Name == m.Name {
			m.Shared, r.m.Methods[i-1].Shared = true, true
		}
		if !m.Notification {
			requests[m.Name] = true
		}
	}
	handlers := map[string]string{}
	for _, m := range r.m.Methods {
		// A notification whose wire name also names a request keeps
		// "Notification" in its Go name (MessageMcpNotification).
		if m.Notification && requests[m.Name] {
			m.GoMethod = goName(m.Params.Schema)
		}
		if prev, ok := handlers[m.HandlerName()]; ok {
			return fmt.Errorf("methods %s and %s (%s) would both be %s", prev, m.Name, m.Side, m.HandlerName())
		}
		handlers[m.HandlerName()] = m.Name + " (" + m.Side + ")"
	}
	if len(r.m.Methods) == 0 {
		// Only types, no protocol (a golden schema): nothing is required.
		return nil
	}
	for side, names := range requiredMethods {
		for _, wire := range names {
			found := false
			for _, m := range r.m.Methods {
				if m.Side == side && m.Name == wire && !found {
					found = true
				}
			}
			if !found {
				return fmt.Errorf("requiredMethods: %s method %s is not in the schema", side, wire)
			}
		}
	}
	return nil
}

// sidePattern is what an x-side must look like to name Go identifiers
// (SideProxy, ProxyPeer).
var sidePattern = regexp.MustCompile(`^[a-z]+$`)

// extraSides are the x-sides beyond agent, client and protocol, sorted:
// each gets a Side constant, a peer, a handler interface and a dispatcher.
func (m *Model) extraSides() []string {
	seen := map[string]bool{"agent": true, "client": true, "protocol": true}
	var out []string
	for _, me := range m.Methods {
		if !seen[me.Side] {
			seen[me.Side] = true
			out = append(out, me.Side)
		}
	}
	sort.Strings(out)
	return out
}

func isRequired(m *Method) bool {
	for _, wire := range requiredMethods[m.Side] {
		if wire == m.Name {
			return true
		}
	}
	return false
}
