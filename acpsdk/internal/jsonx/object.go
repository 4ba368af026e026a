package jsonx

// The shared half of every generated object codec. A generated type keeps
// only what differs between types: a descriptor (Fields: its members'
// names and decoding rules, built once at init), a switch that sends each
// known member to the helper for its Go type (Value, Ptr, Text, IntMin,
// IntMinPtr, List, Map, StructPtr, Union), and a switch that encodes member
// i. Walking the members, the member-order bookkeeping, required members,
// nulls, the leniency keywords and the error paths live here, once.

// Flag is a decoding or encoding rule of one member.
type Flag uint16

// The rules a member can carry.
const (
	// Required: absent is an ErrMissingField error.
	Required Flag = 1 << iota
	// HasDefault: the member has a schema default other than its zero; it
	// is always encoded, and left out again only when it arrived absent.
	HasDefault
	// Omit: the member is left out of the encoding while it is nil.
	Omit
	// Nullable: null decodes as unset (or the default), and an unset member
	// that arrived as null is written back as null.
	Nullable
	// OnNull (x-deserialize-default-on-null): null decodes as the empty
	// list or map.
	OnNull
	// Lenient (x-deserialize-default-on-error): a malformed value decodes
	// as the member's default instead of failing the message.
	Lenient
	// SkipInvalid (x-deserialize-skip-invalid-items): a list item that does
	// not decode is dropped.
	SkipInvalid
	// Empty: the member's zero is the empty list or map, not nil (a
	// required collection, always encoded).
	Empty
)

// Field describes one member of an object, for NewFields.
type Field struct {
	name      string
	flags     Flag
	minLength int
	minItems  int
	min       int64
}

// F describes the member name with its rules.
func F(name string, flags Flag) Field { return Field{name: name, flags: flags} }

// MinLength adds a minimum length (in bytes) to a string member.
func (f Field) MinLength(n int) Field { f.minLength = n; return f }

// MinItems adds a minimum number of items to a list member.
func (f Field) MinItems(n int) Field { f.minItems = n; return f }

// Min adds a minimum the Go type does not imply to an integer member
// (decoded with IntMin or IntMinPtr).
func (f Field) Min(n int64) Field { f.min = n; return f }

// Fields is the descriptor of a generated object type: its members in
// schema order (a member's index is its position) with their rules.
type Fields struct {
	fields   []Field
	keys     []string // `"name":`, by index
	required uint64   // members that must be present
	defaults uint64   // members with a schema default
	omit     uint64   // members encoded only while set
}

// NewFields builds the descriptor of an object with the given members, at
// most 64.
func NewFields(fields ...Field) *Fields {
	if len(fields) > 64 {
		panic("jsonx: more than 64 members")
	}
	o := &Fields{fields: fields, keys: make([]string, len(fields))}
	// Every key rendered into one string, each a slice of it: one
	// allocation per object rather than two per member (descriptors are
	// built at init, in every program that imports a surface).
	var b []byte
	ends := make([]int, len(fields))
	for i, f := range fields {
		b = append(AppendString(b, f.name), ':')
		ends[i] = len(b)
	}
	all, start := string(b), 0
	for i, f := range fields {
		o.keys[i], start = all[start:ends[i]], ends[i]
		bit := uint64(1) << i
		if f.flags&Required != 0 {
			o.required |= bit
		}
		if f.flags&HasDefault != 0 {
			o.defaults |= bit
		}
		if f.flags&Omit != 0 {
			o.omit |= bit
		}
	}
	return o
}

// index is the index of the member named key, or -1.
func (o *Fields) index(key []byte) int {
	for i := range o.fields {
		if string(key) == o.fields[i].name {
			return i
		}
	}
	return -1
}

// Key appends a separator (as needed) and key, a member's `"name":`.
func Key(b []byte, key string) []byte { return append(Sep(b), key...) }

// Append appends the members of an object (each after a separator as
// needed): tag first when not empty (a union's rendered discriminator
// member), then every known member through field (which appends nothing
// for an unset one), then the kept members m. A recorded arrival order
// (see order.go) is followed instead; isDefault, if not nil, tells whether
// a member that arrived absent still equals its default.
func (o *Fields) Append(b []byte, tag string, m Members, field func([]byte, int) ([]byte, error), isDefault func(int) bool) ([]byte, error) {
	if HasLayout(m) {
		return o.appendOrdered(b, m, tag, field, isDefault)
	}
	if tag != "" {
		b = append(Sep(b), tag...)
	}
	var err error
	for i := range o.fields {
		if b, err = field(b, i); err != nil {
			return b, AtField(err, o.fields[i].name)
		}
	}
	return AppendMembers(b, m), nil
}

// field appends member i through field, with its name in an error's path.
func (o *Fields) field(field func([]byte, int) ([]byte, error), b []byte, i int) ([]byte, error) {
	b, err := field(b, i)
	if err != nil {
		return b, AtField(err, o.fields[i].name)
	}
	return b, nil
}

// Decoder walks the members of one JSON object for a generated decoder:
// Begin, then for each member Next, and for a known one (found by a switch
// on Key) At with its index and the helper for its Go type; then End. The first
// error stops the walk and is End's result, with the member's name in its
// path.
type Decoder struct {
	it    ObjectIter
	o     *Fields
	data  []byte
	i     int    // the current member's index
	seen  uint64 // members that arrived
	set   uint64 // omittable members that decoded to a value
	nulls uint64 // members that arrived as null and decoded as unset
	ord   Order
	err   error
}

// Begin starts decoding the object at the start of data (which may go on
// after it), described by o; skip is the decoder's (members that belong to
// an enclosing object or union).
func (d *Decoder) Begin(data []byte, o *Fields, skip []string) {
	d.o, d.data = o, data
	d.err = d.it.ResetPrefix(data)
	if len(skip) == 1 && d.err == nil {
		d.skipFirst(skip[0])
	}
}

// skipFirst starts the walk after the first member when it is key with a
// string value, written compactly and without escapes: a union's tag as
// peers send it, which the union's decoder has read already. The walk
// would only skip it (see Extra), and it comes first, where it leaves the
// member order canonical; this saves scanning it a second time.
func (d *Decoder) skipFirst(key string) {
	data, n := d.data, len(key)
	if len(data) <= n+5 || data[0] != '{' || data[1] != '"' || string(data[2:2+n]) != key ||
		data[2+n] != '"' || data[3+n] != ':' || data[4+n] != '"' {
		return
	}
	// Its end, and no escape in it, found as fastString finds them.
	i, escaped, err := fastString(data, 4+n)
	if err != nil || escaped {
		return
	}
	switch {
	case i < len(data) && data[i] == ',':
		d.it.i = skipSpace(data, i+1)
	case i < len(data) && data[i] == '}':
		d.it.finish(i + 1)
	}
}

// Next advances to the next member; false at the end or after an error.
func (d *Decoder) Next() bool { return d.err == nil && d.it.Next() }

// Key is the current member's (unescaped) name, for the generated switch
// that picks the member.
func (d *Decoder) Key() []byte { return d.it.Key() }

// At notes that the current member is the known member with index i (its
// rules are the descriptor's) and returns d, for the helper that decodes it.
// It stays a call: inlined at every member of every generated decoder
// (~430 sites) it cost about a tenth of acpsdk/gen's compile time, for no
// speed measurable in BenchmarkCodec.
//
//go:noinline
func (d *Decoder) At(i int) *Decoder {
	d.i = i
	d.seen |= 1 << i
	d.ord.Known(i)
	return d
}

// Extra keeps the current (unknown) member in m, unless skip names it: it
// then belongs to an enclosing object or union.
func (d *Decoder) Extra(m *Members, skip []string) {
	if Skipped(d.it.Key(), skip) {
		d.ord.Skipped(skip)
		return
	}
	d.unknown(m)
}

// unknown keeps the current member in m.
func (d *Decoder) unknown(m *Members) {
	d.ord.Unknown()
	AddMember(m, d.it.Member())
}

// Absent reports whether member i, which has a schema default, did not
// arrive: the caller sets the default, which will stay absent on
// re-encoding.
func (d *Decoder) Absent(i int) bool {
	if d.seen&(1<<i) != 0 {
		return false
	}
	d.ord.Absent()
	return true
}

// Finish ends the walk: the first error met, else an ErrMissingField error
// for the first required member that did not arrive.
func (d *Decoder) Finish() error {
	if d.err == nil {
		d.err = d.it.Err()
	}
	if d.err != nil {
		return d.err
	}
	if miss := d.o.required &^ d.seen; miss != 0 {
		for i := range d.o.fields {
			if miss&(1<<i) != 0 {
				return Missing(d.o.fields[i].name)
			}
		}
	}
	return nil
}

// Data is the object's own bytes, once Finish succeeded.
func (d *Decoder) Data() []byte { return d.data[:d.it.End()] }

// Layout records in m the order the members arrived in, when it is not the
// canonical one (see order.go); skip is the decoder's.
func (d *Decoder) Layout(m *Members, skip []string) {
	if !d.ord.Disordered() {
		return
	}
	o := d.o
	n := len(o.fields)
	all := uint64(1)<<n - 1
	if n == 64 {
		all = ^uint64(0)
	}
	always := all &^ (o.omit | o.defaults)
	present := always | d.set&o.omit | d.seen&o.defaults
	absent := o.defaults &^ d.seen
	SetLayout(m, NormalizeLayout(BuildLayout(d.Data(), skip, o.index), present, absent, d.nulls, n))
}

// End is Finish, then Layout for an object that keeps its unknown members
// in m (nil for one that drops them); it returns the object's length.
func (d *Decoder) End(m *Members, skip []string) (int, error) {
	if d.err == nil && d.it.err == nil && d.o.required&^d.seen == 0 && !d.ord.disorder {
		return d.it.end, nil // the common case, inlined
	}
	return d.end(m, skip)
}

func (d *Decoder) end(m *Members, skip []string) (int, error) {
	if err := d.Finish(); err != nil {
		return 0, err
	}
	if m != nil {
		d.Layout(m, skip)
	}
	return d.it.End(), nil
}

// Len is the object's length, once Finish succeeded.
func (d *Decoder) Len() int { return d.it.End() }

// A member with no null or leniency rule (most required ones) is decoded
// by a direct call, which is faster than a helper's call through a func
// value:
//
//	if v, err := decodeT(d.At(i).Value()); d.Ok(err) { x.F = v }

// Value is the current member's raw value.
func (d *Decoder) Value() []byte { return d.it.Value() }

// Ok takes the error of decoding the current member's value: it reports
// whether the value decoded (and is to be stored); a failure stops the walk.
func (d *Decoder) Ok(err error) bool {
	if err != nil {
		d.err = AtField(err, d.o.fields[d.i].name)
		return false
	}
	d.set |= 1 << d.i
	return true
}

// Took is Ok for a value decoded from Rest, of length n.
func (d *Decoder) Took(n int, err error) bool {
	if !d.Ok(err) {
		return false
	}
	d.it.Consume(n)
	return true
}

// nullRule is what a null value of the current member decodes as.
type nullRule int

const (
	nullDecode  nullRule = iota // no rule: the value's decoder sees null
	nullZero                    // unset: the zero (nil)
	nullEmpty                   // the empty list or map
	nullDefault                 // the schema default, set by the caller
)

// null applies the current member's rule for null (the value is null).
func (d *Decoder) null() nullRule {
	f := d.o.fields[d.i].flags
	switch {
	case f&OnNull != 0:
		d.set |= 1 << d.i
		return nullEmpty
	case f&Nullable == 0:
		return nullDecode
	case f&HasDefault != 0:
		return nullDefault
	}
	d.set &^= 1 << d.i
	d.nulls |= 1 << d.i
	d.ord.Null()
	if f&Empty != 0 {
		return nullEmpty
	}
	return nullZero
}

// fail handles err, the failure to decode the current member's value:
// under Lenient the member takes its default (what fail returns; the
// caller sets it), else the walk stops with err.
func (d *Decoder) fail(err error) nullRule {
	f := d.o.fields[d.i].flags
	if f&Lenient == 0 {
		d.err = AtField(err, d.o.fields[d.i].name)
		return nullDecode
	}
	switch {
	case f&HasDefault != 0:
		return nullDefault
	case f&Empty != 0:
		d.set |= 1 << d.i
		return nullEmpty
	}
	d.set &^= 1 << d.i
	return nullZero
}

// ok notes that the current member decoded to a value.
func (d *Decoder) ok() { d.set |= 1 << d.i }

// decided stores the outcome of a null or failure rule r for a member of
// type T: the zero, the empty collection (empty, for lists and maps), or
// nothing for the default, which the caller sets (the result is false).
func decided[T any](dst *T, r nullRule, empty func() T) bool {
	switch r {
	case nullZero:
		var zero T
		*dst = zero
	case nullEmpty:
		*dst = empty()
	case nullDefault:
		return false
	}
	return true
}

func zeroOf[T any]() T { var zero T; return zero }

// Value decodes the current member with dec into *dst. It returns false
// when the member must take its schema default instead (the caller sets
// it); the other outcomes are dealt with here.
func Value[T any](d *Decoder, dst *T, dec func([]byte) (T, error)) bool {
	if d.it.IsNull() {
		if r := d.null(); r != nullDecode {
			return decided(dst, r, zeroOf[T])
		}
	}
	v, err := dec(d.it.Value())
	if err != nil {
		return decided(dst, d.fail(err), zeroOf[T])
	}
	*dst = v
	d.ok()
	return true
}

// Text is Value for a string member with a minimum length.
func Text[T ~string](d *Decoder, dst *T, dec func([]byte) (T, error)) bool {
	if d.it.IsNull() {
		if r := d.null(); r != nullDecode {
			return decided(dst, r, zeroOf[T])
		}
	}
	v, err := dec(d.it.Value())
	if err == nil {
		err = MinLength(string(v), d.o.fields[d.i].minLength)
	}
	if err != nil {
		return decided(dst, d.fail(err), zeroOf[T])
	}
	*dst = v
	d.ok()
	return true
}

// IntMin is Value for an integer member with a minimum (Field.Min).
func IntMin[T Integer](d *Decoder, dst *T, dec func([]byte) (T, error)) bool {
	if d.it.IsNull() {
		if r := d.null(); r != nullDecode {
			return decided(dst, r, zeroOf[T])
		}
	}
	v, err := dec(d.it.Value())
	if err == nil {
		err = Minimum(v, d.o.fields[d.i].min)
	}
	if err != nil {
		return decided(dst, d.fail(err), zeroOf[T])
	}
	*dst = v
	d.ok()
	return true
}

// IntMinPtr is Ptr for an integer member with a minimum (Field.Min).
func IntMinPtr[T Integer](d *Decoder, dst **T, dec func([]byte) (T, error)) bool {
	if d.it.IsNull() {
		if r := d.null(); r != nullDecode {
			return decided(dst, r, zeroOf[*T])
		}
	}
	v, err := dec(d.it.Value())
	if err == nil {
		err = Minimum(v, d.o.fields[d.i].min)
	}
	if err != nil {
		return decided(dst, d.fail(err), zeroOf[*T])
	}
	*dst = &v
	d.ok()
	return true
}

// Ptr decodes the current member with dec into a new *T.
func Ptr[T any](d *Decoder, dst **T, dec func([]byte) (T, error)) bool {
	if d.it.IsNull() {
		if r := d.null(); r != nullDecode {
			return decided(dst, r, zeroOf[*T])
		}
	}
	v, err := dec(d.it.Value())
	if err != nil {
		return decided(dst, d.fail(err), zeroOf[*T])
	}
	*dst = &v
	d.ok()
	return true
}

// List decodes the current member, an array, with dec for each item.
func List[T any](d *Decoder, dst *[]T, dec func([]byte) (T, error)) bool {
	empty := func() []T { return []T{} }
	if d.it.IsNull() {
		if r := d.null(); r != nullDecode {
			return decided(dst, r, empty)
		}
	}
	f := &d.o.fields[d.i]
	v, err := ListOf(d.it.Value(), f.flags&SkipInvalid != 0, dec)
	if err == nil && f.minItems > 0 {
		err = MinItems(len(v), f.minItems)
	}
	if err != nil {
		return decided(dst, d.fail(err), empty)
	}
	*dst = v
	d.ok()
	return true
}

// Map decodes the current member, an object, with dec for each value.
func Map[T any](d *Decoder, dst *map[string]T, dec func([]byte) (T, error)) bool {
	empty := func() map[string]T { return map[string]T{} }
	if d.it.IsNull() {
		if r := d.null(); r != nullDecode {
			return decided(dst, r, empty)
		}
	}
	v, err := MapOf(d.it.Value(), dec)
	if err != nil {
		return decided(dst, d.fail(err), empty)
	}
	*dst = v
	d.ok()
	return true
}

// Union decodes the current member with dec, which reads a value from the
// start of its input and reports its length (the value is not scanned
// twice).
func Union[T any](d *Decoder, dst *T, dec func([]byte) (T, int, error)) bool {
	if d.it.IsNull() {
		if r := d.null(); r != nullDecode {
			return decided(dst, r, zeroOf[T])
		}
	}
	v, n, err := dec(d.it.Rest())
	if err != nil {
		return decided(dst, d.fail(err), zeroOf[T])
	}
	d.it.Consume(n)
	*dst = v
	d.ok()
	return true
}

// An object member decoded in place calls its decodeAt directly (through
// a func value its receiver would escape):
//
//	if d.Null() || !d.Consumed(x.F.decodeAt(d.Rest(), nil)) { x.F = default }

// Null reports whether the current member is a null that decodes as the
// member's default (which the caller sets).
func (d *Decoder) Null() bool {
	return d.it.IsNull() && d.o.fields[d.i].flags&Nullable != 0
}

// Rest is the input from the current member's value on.
func (d *Decoder) Rest() []byte { return d.it.Rest() }

// Consumed takes the result of decoding the current member's value from
// Rest: its length, or its error. It returns false when the member must
// take its default instead (Lenient; the caller sets it).
func (d *Decoder) Consumed(n int, err error) bool {
	if err != nil {
		return d.fail(err) == nullDecode
	}
	d.it.Consume(n)
	d.ok()
	return true
}

// StructPtr decodes the current member, an object, into a new *T with dec.
func StructPtr[T any](d *Decoder, dst **T, dec func(*T, []byte, []string) (int, error)) bool {
	if d.it.IsNull() {
		if r := d.null(); r != nullDecode {
			return decided(dst, r, zeroOf[*T])
		}
	}
	p := new(T)
	n, err := dec(p, d.it.Rest(), nil)
	if err != nil {
		return decided(dst, d.fail(err), zeroOf[*T])
	}
	d.it.Consume(n)
	*dst = p
	d.ok()
	return true
}

// NilUnion is the error of a required union member left nil.
func NilUnion() error { return EncodeError("", "required union value is nil") }

// Braces wraps members appended after b's '{' in the closing brace.
func Braces(b []byte, err error) ([]byte, error) {
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// Length drops a decoder's length result, keeping its error.
func Length(_ int, err error) error { return err }
