package jsonx

import (
	"iter"

	"github.com/segmentio/encoding/json"
)

// Members holds the members of a JSON object that its schema type does not
// know, byte for byte and in arrival order, so that decoding and encoding a
// message from a newer peer loses nothing. The zero value is empty.
//
// Internally it is the raw member text joined by commas ("a":1,"b":[2]):
// one buffer, no per-member allocation, re-emitted with a single append.
type Members struct {
	// One pointer, nil when there is nothing: every generated object
	// carries a Members, so it is kept small.
	p *membersData
}

type membersData struct {
	raw    []byte
	layout []byte // arrival order when it was not canonical (see order.go)
}

func (m Members) rawBytes() []byte {
	if m.p == nil {
		return nil
	}
	return m.p.raw
}

func (m *Members) data() *membersData {
	if m.p == nil {
		m.p = &membersData{}
	}
	return m.p
}

// AddMember appends one raw member (`"key":value`, as produced by
// ObjectIter.Member) to m. Generated decoders call it; the bytes are
// copied. It is a function, not a method, so that users of the re-exported
// type see only the safe methods.
func AddMember(m *Members, member []byte) {
	d := m.data()
	if len(d.raw) > 0 {
		d.raw = append(d.raw, ',')
	}
	d.raw = append(d.raw, member...)
}

// Len is the number of members.
func (m Members) Len() int {
	n := 0
	for range m.All() {
		n++
	}
	return n
}

// All iterates the members as (unescaped key, raw value) pairs.
func (m Members) All() iter.Seq2[string, json.RawMessage] {
	return func(yield func(string, json.RawMessage) bool) {
		raw := m.rawBytes()
		if len(raw) == 0 {
			return
		}
		buf := make([]byte, 0, len(raw)+2)
		buf = append(buf, '{')
		buf = append(buf, raw...)
		buf = append(buf, '}')
		var it ObjectIter
		if it.Reset(buf) != nil {
			return
		}
		for it.Next() {
			if !yield(string(it.Key()), json.RawMessage(it.Value())) {
				return
			}
		}
	}
}

// Get returns the raw value of the first member named key.
func (m Members) Get(key string) (json.RawMessage, bool) {
	for k, v := range m.All() {
		if k == key {
			return v, true
		}
	}
	return nil, false
}

// Set replaces the value of member key, or appends the member. The value
// must be valid JSON.
func (m *Members) Set(key string, value json.RawMessage) error {
	if err := Validate(value); err != nil {
		return err
	}
	var out Members
	replaced := false
	for k, v := range m.All() {
		if k == key {
			if replaced {
				continue
			}
			v, replaced = value, true
		}
		out.add(k, v)
	}
	if !replaced {
		out.add(key, value)
	}
	out.data().layout = layoutOf(*m)
	*m = out
	return nil
}

// Delete removes every member named key.
func (m *Members) Delete(key string) {
	var out Members
	for k, v := range m.All() {
		if k != key {
			out.add(k, v)
		}
	}
	if l := layoutOf(*m); l != nil {
		out.data().layout = l
	}
	*m = out
}

func (m *Members) add(key string, value []byte) {
	d := m.data()
	if len(d.raw) > 0 {
		d.raw = append(d.raw, ',')
	}
	d.raw = AppendString(d.raw, key)
	d.raw = append(d.raw, ':')
	d.raw = append(d.raw, trimSpace(value)...)
}

// AppendMembers appends m's members to an object being encoded.
func AppendMembers(b []byte, m Members) []byte {
	raw := m.rawBytes()
	if len(raw) == 0 {
		return b
	}
	b = Sep(b)
	return append(b, raw...)
}
