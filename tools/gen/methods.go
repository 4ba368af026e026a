package main

import (
	"fmt"
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

// requiredMethods are the handler methods every implementation must have.
// The schema has no "baseline" marker, so this small table says which
// methods are baseline per the protocol (§4 of protocol.md); every other
// method gets its own optional one-method interface. Checked: an entry that
// names no method fails generation.
var requiredMethods = map[string][]string{
	"agent":  {"Initialize", "NewSession", "Prompt", "Cancel"},
	"client": {"SessionUpdate", "RequestPermission"},
}

func (r *resolver) override(key string) (string, bool) {
	v, ok := overrides[key]
	if ok {
		r.used[key] = true
	}
	return v, ok
}

func (r *resolver) checkOverrides() error {
	if len(r.m.Methods) == 0 {
		return nil // a golden schema: the overrides are the protocol's
	}
	var unused []string
	for k := range overrides {
		if !r.used[k] {
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
		switch side {
		case "agent", "client", "protocol":
		default:
			return fmt.Errorf("%s: unknown x-side %q", n.path, side)
		}
		t := r.m.defs[name]
		if t.Kind != TStruct {
			return fmt.Errorf("%s: method params/result must be an object", n.path)
		}
		m := byName[wire]
		if m == nil {
			m = &Method{Name: wire, Side: side, Const: "Method" + goName(wire)}
			byName[wire] = m
		}
		if m.Side != side {
			return fmt.Errorf("%s: %s has sides %s and %s", n.path, wire, m.Side, side)
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
	sort.Slice(r.m.Methods, func(i, j int) bool { return r.m.Methods[i].Name < r.m.Methods[j].Name })
	if len(r.m.Methods) == 0 {
		// Only types, no protocol (a golden schema): nothing is required.
		return nil
	}
	for side, names := range requiredMethods {
		for _, gm := range names {
			found := false
			for _, m := range r.m.Methods {
				if m.Side == side && m.GoMethod == gm {
					found = true
				}
			}
			if !found {
				return fmt.Errorf("requiredMethods: %s method %s is not in the schema", side, gm)
			}
		}
	}
	return nil
}

func isRequired(m *Method) bool {
	for _, gm := range requiredMethods[m.Side] {
		if gm == m.GoMethod {
			return true
		}
	}
	return false
}
