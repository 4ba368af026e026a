package jsonx

import "bytes"

// Member order. Known members are encoded in schema order, so a message
// that arrives in another order (a peer that puts the tag last, or unknown
// members between known ones) would re-encode differently. To keep
// decode → encode byte-identical for such input too, a decoder notes when
// the order it saw is not the canonical one and then records a layout: the
// sequence of members as they arrived. Canonical input, the common case,
// costs nothing and records nothing.

// Layout entries besides a known member's index (0..63).
const (
	// LayoutTag marks where the union's discriminator was.
	LayoutTag byte = 0xFE
	// LayoutUnknown marks the next member kept in Extra.
	LayoutUnknown byte = 0xFF
	// LayoutAbsent|i marks member i as absent on arrival and given its
	// schema default: it is written only if it no longer equals it.
	LayoutAbsent byte = 0x80
	// LayoutNull|i marks member i as an explicit null on arrival (which
	// decodes as unset): it is written as null while it stays unset.
	LayoutNull byte = 0x40
)

// Order watches the members of one object go by and reports whether they
// came in canonical order: the tag first, known members by ascending index,
// unknown members last.
type Order struct {
	last     int
	seen     bool
	unknown  bool
	disorder bool
}

// Known notes the known member with index i.
func (o *Order) Known(i int) {
	if o.unknown || (o.seen && i <= o.last) {
		o.disorder = true
	}
	o.last, o.seen = i, true
}

// Unknown notes an unknown member.
func (o *Order) Unknown() { o.unknown = true }

// Skipped notes a member that belongs to an enclosing object or union; a
// lone skipped key is a union's tag, which canonically comes first.
func (o *Order) Skipped(skip []string) {
	if len(skip) == 1 && (o.seen || o.unknown) {
		o.disorder = true
	}
}

// Absent notes a member that was absent and took its schema default: to
// re-encode byte for byte it must stay absent, which needs a layout.
func (o *Order) Absent() { o.disorder = true }

// Null notes a member that arrived as an explicit null and decoded as unset:
// to re-encode byte for byte the null must be written back, which needs a
// layout.
func (o *Order) Null() { o.disorder = true }

// Disordered reports whether a layout must be recorded.
func (o *Order) Disordered() bool { return o.disorder }

// BuildLayout records the arrival order of the members of the object data
// (a second pass, only for non-canonical input). index maps a key to its
// known member index, or -1.
func BuildLayout(data []byte, skip []string, index func([]byte) int) []byte {
	var it ObjectIter
	if it.Reset(data) != nil {
		return nil
	}
	var out []byte
	for it.Next() {
		switch i := index(it.Key()); {
		case i >= 0:
			out = append(out, byte(i))
		case Skipped(it.Key(), skip):
			if len(skip) == 1 {
				out = append(out, LayoutTag)
			}
		default:
			out = append(out, LayoutUnknown)
		}
	}
	return out
}

// SetLayout attaches a recorded layout to an object's members.
func SetLayout(m *Members, layout []byte) {
	if layout == nil && m.p == nil {
		return
	}
	m.data().layout = layout
}

// HasLayout reports whether m records a non-canonical arrival order.
func HasLayout(m Members) bool { return layoutOf(m) != nil }

// layoutOf is the recorded arrival order, or nil for canonical order.
func layoutOf(m Members) []byte {
	if m.p == nil {
		return nil
	}
	return m.p.layout
}

// cursor walks the kept members in order, for an encoder that interleaves
// them with known members.
func cursor(m Members) MemberCursor { return MemberCursor{raw: m.rawBytes()} }

// MemberCursor appends kept members one at a time.
type MemberCursor struct {
	raw []byte
	i   int
}

// Next appends the next kept member (with a separator as needed); nothing
// when none is left.
func (c *MemberCursor) Next(b []byte) []byte {
	if c.i >= len(c.raw) {
		return b
	}
	start := c.i
	end, _, err := fastString(c.raw, start)
	if err == nil {
		i := skipSpace(c.raw, end)
		if i < len(c.raw) && c.raw[i] == ':' {
			end, err = fastSkip(c.raw, skipSpace(c.raw, i+1))
		}
	}
	if err != nil {
		// Cannot happen for members kept by a decoder or Set; emit the
		// rest verbatim rather than lose it.
		end = len(c.raw)
	}
	c.i = end
	if c.i < len(c.raw) && c.raw[c.i] == ',' {
		c.i++
	}
	b = Sep(b)
	return append(b, c.raw[start:end]...)
}

// Rest appends every member not yet appended.
func (c *MemberCursor) Rest(b []byte) []byte {
	for c.i < len(c.raw) {
		b = c.Next(b)
	}
	return b
}

// HasTag reports whether a layout records the tag's position.
func HasTag(layout []byte) bool { return bytes.IndexByte(layout, LayoutTag) >= 0 }

// NormalizeLayout makes a layout describe exactly what the encoder will
// write, so that decoding the encoding gives the same layout back: members
// that will not be written (present lacks their bit: they decoded to
// nothing) and repeats are dropped, members absent on arrival that took a
// default (absent) are marked to stay absent, members that will be written
// but did not arrive are added in schema order, and a layout that turns out
// canonical becomes nil.
func NormalizeLayout(layout []byte, present, absent, nulls uint64, n int) []byte {
	var seen uint64
	out := layout[:0:0]
	for _, e := range layout {
		switch {
		case e == LayoutTag || e == LayoutUnknown:
			out = append(out, e)
		case int(e) >= n || seen&(1<<e) != 0:
		case present&(1<<e) != 0:
			seen |= 1 << e
			out = append(out, e)
		case nulls&(1<<e) != 0:
			seen |= 1 << e
			out = append(out, LayoutNull|e)
		}
	}
	for i := 0; i < n; i++ {
		switch {
		case absent&(1<<i) != 0:
			out = append(out, LayoutAbsent|byte(i))
		case present&(1<<i) != 0 && seen&(1<<i) == 0:
			out = append(out, byte(i))
		}
	}
	if canonical(out) {
		return nil
	}
	return out
}

// canonical: the tag (if any) first, known members ascending, unknown last.
func canonical(layout []byte) bool {
	last := -1
	unknown := false
	for i, e := range layout {
		switch {
		case e == LayoutTag:
			if i != 0 {
				return false
			}
		case e == LayoutUnknown:
			unknown = true
		case e&0xC0 == LayoutAbsent, e&0xC0 == LayoutNull:
			return false
		default:
			if unknown || int(e) <= last {
				return false
			}
			last = int(e)
		}
	}
	return true
}

// appendOrdered appends an object's members following its layout: the tag
// (a pre-rendered discriminator member, or ""), known members through
// field(b, i) (which appends nothing for an unset member; keys[i] is member
// i's `"name":` prefix), kept members from m, members that arrived absent
// only if isDefault(i) says they changed, and members that arrived null as
// null while they are unset; then whatever the layout did not mention:
// known members set since decoding, in index order, and remaining kept
// members.
func (o *Fields) appendOrdered(b []byte, m Members, tag string, field func([]byte, int) ([]byte, error), isDefault func(int) bool) ([]byte, error) {
	var done uint64
	var err error
	keys := o.keys
	n := len(keys)
	layout := layoutOf(m)
	rest := cursor(m)
	if tag != "" && !HasTag(layout) {
		// The layout did not see the tag: it goes first.
		b = append(Sep(b), tag...)
		tag = ""
	}
	for _, e := range layout {
		switch {
		case e == LayoutTag:
			if tag != "" {
				b = append(Sep(b), tag...)
				tag = ""
			}
		case e == LayoutUnknown:
			b = rest.Next(b)
		case e&0xC0 == LayoutAbsent:
			i := int(e &^ LayoutAbsent)
			if i >= n || done&(1<<i) != 0 {
				continue
			}
			done |= 1 << i
			if isDefault != nil && isDefault(i) {
				continue
			}
			if b, err = o.field(field, b, i); err != nil {
				return b, err
			}
		case e&0xC0 == LayoutNull:
			i := int(e &^ LayoutNull)
			if i >= n || done&(1<<i) != 0 {
				continue
			}
			done |= 1 << i
			before := len(b)
			if b, err = o.field(field, b, i); err != nil {
				return b, err
			}
			if len(b) == before {
				b = append(Sep(b), keys[i]...)
				b = append(b, "null"...)
			}
		case int(e) < n && done&(1<<e) == 0:
			done |= 1 << e
			if b, err = o.field(field, b, int(e)); err != nil {
				return b, err
			}
		}
	}
	for i := 0; i < n; i++ {
		if done&(1<<i) == 0 {
			if b, err = o.field(field, b, i); err != nil {
				return b, err
			}
		}
	}
	return rest.Rest(b), nil
}
