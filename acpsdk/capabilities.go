package acpsdk

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/segmentio/encoding/json"
)

// Strict mode: what a peer must have advertised before a method may be
// called on it. The schemas do not carry these rules in a form a generator
// can read, so each surface has a small hand table (strict_rules.go) whose
// rows name members of the peer's initialize message by their wire path
// ("agentCapabilities.sessionCapabilities.fork"). What the peer advertised
// is decoded with the surface's generated decoders, the very decode its
// typed API gives the user (lenient where the schema says x-deserialize-*,
// exact about member names), and a path is looked up in that decoded value
// by its members' json tags, so strict mode and the user never disagree
// about a capability.

// ErrNotAdvertised matches a [*CapabilityError]: strict mode refused, without
// sending it, a call the peer's capabilities do not allow.
var ErrNotAdvertised = errors.New("acpsdk: not advertised by the peer")

// CapabilityError is strict mode's refusal of one call.
type CapabilityError struct {
	// Method is the refused method.
	Method string
	// Requires names what the peer would have had to advertise, e.g.
	// "agentCapabilities.loadSession".
	Requires string
}

// Error describes the refusal.
func (e *CapabilityError) Error() string {
	return fmt.Sprintf("acpsdk: strict mode refused %s: the peer did not advertise %s", e.Method, e.Requires)
}

// Is matches ErrNotAdvertised.
func (e *CapabilityError) Is(target error) bool { return target == ErrNotAdvertised }

// peerState is one side's record of what its peer advertised: its
// initialize message (an agent's response, a client's request params) and
// each session's setup response, decoded into the surface's generated
// types. Before the initialize exchange nothing is advertised, so only
// baseline methods pass.
type peerState struct {
	mu       sync.Mutex
	init     reflect.Value // invalid until a decodable initialize message
	sessions map[string]reflect.Value
}

// learnInit records a decoded initialize message; one that did not decode
// advertises nothing.
func (s *peerState) learnInit(v any, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || v == nil {
		s.init = reflect.Value{}
		return
	}
	s.init = reflect.ValueOf(v)
}

// learnSession records a decoded setup response for session id.
func (s *peerState) learnSession(id string, v any) {
	if id == "" || v == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions == nil {
		s.sessions = make(map[string]reflect.Value)
	}
	s.sessions[id] = reflect.ValueOf(v)
}

// sessionIDOf reads the sessionId member of params or of a result.
func sessionIDOf(raw []byte) string {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(raw, &p)
	return p.SessionID
}

// advertised reports whether the member at path is advertised in v: true,
// a non-null object, or (nonEmpty) a non-empty list; with !nonEmpty a list
// only has to be present. A path the value lacks is not advertised.
func advertised(v reflect.Value, path string, nonEmpty bool) bool {
	v, ok := member(v, path)
	if !ok {
		return false
	}
	switch v.Kind() {
	case reflect.Bool:
		return v.Bool()
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil()
	case reflect.Slice, reflect.Map:
		if nonEmpty {
			return v.Len() > 0
		}
		return !v.IsNil()
	case reflect.Struct:
		return true
	}
	return !v.IsZero()
}

// member walks path (member names joined by ".") through generated
// structs by their json tags. A nil pointer on the way, or a name no
// struct has, ends the walk with ok false.
func member(v reflect.Value, path string) (reflect.Value, bool) {
	if !v.IsValid() {
		return v, false
	}
	for name := range strings.SplitSeq(path, ".") {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return v, false
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return v, false
		}
		f, ok := fieldByTag(v.Type(), name)
		if !ok {
			return v, false
		}
		v = v.Field(f)
	}
	return v, true
}

// fieldByTag finds the field of a generated struct that carries member name.
func fieldByTag(t reflect.Type, name string) (int, bool) {
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if tag == name {
			return i, true
		}
	}
	return 0, false
}

// isExtension reports an extension method (leading underscore), which
// strict mode never gates.
func isExtension(method string) bool { return strings.HasPrefix(method, "_") }

// check applies one gate table to an outgoing call. It returns the params
// to send: already encoded when the check had to look inside them, so they
// are encoded once.
func (s *peerState) check(gates map[string]gate, method string, params any) (any, error) {
	g, ok := gates[method]
	if !ok {
		return params, nil
	}
	var raw json.RawMessage
	if g.needsParams() {
		var err error
		if raw, err = encodeParams(method, params); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	allowed, requires := g.allows(s, raw)
	s.mu.Unlock()
	if !allowed {
		return nil, &CapabilityError{Method: method, Requires: requires}
	}
	if raw != nil {
		return raw, nil
	}
	return params, nil
}

// encodeParams encodes params exactly as the connection would on sending
// them (no HTML escaping, raw members kept byte for byte), so params strict
// mode had to look at go out unchanged.
func encodeParams(method string, params any) (json.RawMessage, error) {
	if params == nil {
		return nil, nil
	}
	if raw, ok := params.(json.RawMessage); ok {
		return raw, nil
	}
	raw, err := json.Append(nil, params, 0)
	if err != nil {
		return nil, fmt.Errorf("acpsdk: encoding %s params: %w", method, err)
	}
	return raw, nil
}

// strictState is strict mode for one side: the surface's table, the
// surface's decoders for what the peer advertises, and what it advertised.
type strictState struct {
	// rules is nil for a surface without a table, whose every call but
	// initialize strict mode then refuses.
	rules  *strictRules
	schema string
	// peerIsAgent: this side is a client; its calls go to an agent.
	peerIsAgent          bool
	newParams, newResult func(method string) any
	peer                 peerState
}

func newStrictState(schema string, peerIsAgent bool, newParams, newResult func(string) any) *strictState {
	return &strictState{rules: strictTables[schema], schema: schema, peerIsAgent: peerIsAgent, newParams: newParams, newResult: newResult}
}

// check applies strict mode to an outgoing call or notification.
func (st *strictState) check(method string, params any) (any, error) {
	if isExtension(method) {
		return params, nil
	}
	if st.rules == nil {
		if method == methodInitialize {
			return params, nil
		}
		return nil, &CapabilityError{Method: method, Requires: "a strict-mode table for " + st.schema}
	}
	gates := st.rules.client
	if st.peerIsAgent {
		gates = st.rules.agent
	}
	return st.peer.check(gates, method, params)
}

// learns reports whether the answer to an outgoing call says what the peer
// advertised.
func (st *strictState) learns(method string) bool {
	return st.peerIsAgent && (method == methodInitialize || st.rules != nil && st.rules.setup[method])
}

// learnAnswer records what the answer to such a call advertised and
// returns the result decoded (nil when it did not decode).
func (st *strictState) learnAnswer(method string, params, result []byte) (any, error) {
	v, err := decodeInto(st.newResult(method), result)
	if method == methodInitialize {
		st.peer.learnInit(v, err)
		return v, err
	}
	if err == nil {
		id := sessionIDOf(result)
		if id == "" {
			id = sessionIDOf(params)
		}
		st.peer.learnSession(id, v)
	}
	return v, err
}

// learnInitialize records a client's initialize params (on the agent side).
func (st *strictState) learnInitialize(params []byte) {
	st.peer.learnInit(decodeInto(st.newParams(methodInitialize), params))
}

// methodInitialize is the one method every surface shares by name.
const methodInitialize = "initialize"

// decodeInto decodes data into v (a pointer to a generated type) with the
// type's own decoder.
func decodeInto(v any, data []byte) (any, error) {
	if v == nil {
		return nil, errors.New("acpsdk: the surface has no type for this message")
	}
	if u, ok := v.(json.Unmarshaler); ok {
		return v, u.UnmarshalJSON(data)
	}
	return v, json.Unmarshal(data, v)
}
