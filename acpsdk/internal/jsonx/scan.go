package jsonx

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// MaxDepth bounds nesting so hostile input cannot exhaust the stack. It is
// the one bound of the SDK: the connection applies it to each member of a
// message (params, result, ...) and the decoders to the value they are
// given, so whatever the connection accepts decodes and re-encodes.
const MaxDepth = 1000

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(data []byte, i int) int {
	if i < len(data) && data[i] > ' ' {
		return i // compact JSON: no whitespace between tokens
	}
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

func trimSpace(data []byte) []byte {
	i := skipSpace(data, 0)
	j := len(data)
	for j > i && isSpace(data[j-1]) {
		j--
	}
	return data[i:j]
}

// TrimSpace returns data without leading and trailing JSON whitespace.
func TrimSpace(data []byte) []byte { return trimSpace(data) }

// syntaxError reports malformed JSON at offset i.
func syntaxError(_ []byte, i int, what string) error {
	return Errorf(ErrSyntax, what+" at offset "+itoa(i))
}

func itoa(i int) string {
	var buf [20]byte
	n := len(buf)
	if i == 0 {
		return "0"
	}
	for i > 0 {
		n--
		buf[n] = byte('0' + i%10)
		i /= 10
	}
	return string(buf[n:])
}

// scanNumber validates the RFC 8259 number grammar.
func scanNumber(data []byte, i int) (int, error) {
	start := i
	if data[i] == '-' {
		i++
	}
	if i >= len(data) {
		return i, syntaxError(data, start, "invalid number")
	}
	switch {
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	default:
		return i, syntaxError(data, start, "invalid number")
	}
	if i < len(data) && data[i] == '.' {
		i++
		d := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		if i == d {
			return i, syntaxError(data, start, "invalid number")
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		d := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		if i == d {
			return i, syntaxError(data, start, "invalid number")
		}
	}
	return i, nil
}

// scanString validates the string starting at data[i] == '"' and returns the
// offset past its closing quote and whether it contains escapes; with lax,
// bytes that are not UTF-8 are let through.
func scanString(data []byte, i int, lax bool) (int, bool, error) {
	// Fast path, for the common plain string: a short one is tested eight
	// bytes at a time, its first special byte found by the lowest mark;
	// a longer one has its closing quote found by IndexByte (much faster
	// than a word-at-a-time search for it) and the bytes before it checked
	// for anything else special, eight at a time. A string with an escape
	// or a non-ASCII byte takes the careful walk below.
	j := i + 1
	for n := 0; n < 2 && j+8 <= len(data); n, j = n+1, j+8 {
		if m := specialMask(binary.LittleEndian.Uint64(data[j:])); m != 0 {
			if j += firstMarked(m); data[j] == '"' {
				return j + 1, false, nil
			}
			return scanStringFrom(data, i, j, lax)
		}
	}
	if q := bytes.IndexByte(data[j:], '"'); q >= 0 && plain(data[j:j+q]) {
		return j + q + 1, false, nil
	}
	return scanStringFrom(data, i, j, lax)
}

// plain reports whether b holds only printable ASCII without a backslash:
// nothing a string scan must look at.
func plain(b []byte) bool {
	var acc uint64
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		acc |= (x-0x20*lsb)&^x | x | zeroBytes(x^('\\'*lsb))
		b = b[8:]
	}
	if acc&msb != 0 {
		return false
	}
	for _, c := range b {
		if strSpecial[c] {
			return false
		}
	}
	return true
}

// scanStringFrom is scanString's careful walk of the string starting at
// data[start] == '"', resumed at i: every byte before i is plain.
func scanStringFrom(data []byte, start, i int, lax bool) (int, bool, error) {
	escaped := false
	for i < len(data) {
		// Fast path: plain ASCII needs no decision; eight bytes at a time,
		// then byte by byte.
		for i+8 <= len(data) && !swarSpecial(binary.LittleEndian.Uint64(data[i:])) {
			i += 8
		}
		for i < len(data) && !strSpecial[data[i]] {
			i++
		}
		if i >= len(data) {
			break
		}
		c := data[i]
		switch {
		case c == '"':
			return i + 1, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(data) {
				return i, escaped, syntaxError(data, start, "unterminated string")
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) || !isHex4(data[i+2:i+6]) {
					return i, escaped, syntaxError(data, i, "invalid \\u escape")
				}
				i += 6
			default:
				return i, escaped, syntaxError(data, i, "invalid escape")
			}
		case c < 0x20:
			return i, escaped, syntaxError(data, i, "control character in string")
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n == 1 && !lax {
				return i, escaped, Errorf(ErrUTF8, "at offset "+itoa(i))
			}
			i += n
		}
	}
	return i, escaped, syntaxError(data, start, "unterminated string")
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// swarSpecial reports whether any of the eight bytes in x is one strSpecial
// marks: a control character, '"', '\\' or a non-ASCII byte.
func swarSpecial(x uint64) bool { return specialMask(x) != 0 }

// specialMask sets the high bit of each byte of x (eight bytes of input,
// the first in the lowest byte) that strSpecial marks. Only the lowest mark
// is exact: a borrow may also mark bytes above a marked one.
func specialMask(x uint64) uint64 {
	ctl := (x - 0x20*lsb) &^ x
	return (ctl | zeroBytes(x^('"'*lsb)) | zeroBytes(x^('\\'*lsb)) | x) & msb
}

// quoteOrBackslash is specialMask for '"' and '\\' alone: what finding
// the end of a string in a validated document looks for.
func quoteOrBackslash(x uint64) uint64 {
	return (zeroBytes(x^('"'*lsb)) | zeroBytes(x^('\\'*lsb))) & msb
}

// zeroBytes sets the high bit of each zero byte of x, and maybe of bytes
// above the lowest one (the classic has-zero-byte test, before the mask).
func zeroBytes(x uint64) uint64 { return (x - lsb) &^ x }

// firstMarked is the offset of the byte of the lowest mark of m (not 0).
func firstMarked(m uint64) int { return bits.TrailingZeros64(m) >> 3 }

// structural marks the bytes that matter when skipping a container.
var structural = func() (t [256]bool) {
	for _, c := range `"{}[]` {
		t[c] = true
	}
	return t
}()

// strSpecial marks the bytes a string scan must look at: the quote, the
// backslash, control characters and non-ASCII (UTF-8 to validate).
var strSpecial = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= 0x80
	}
	return t
}()

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// ValidateValue validates the JSON value at data[i] (after optional
// whitespace), counting nesting from that value as Validate does, and
// returns the offset just past it. A value nested deeper than MaxDepth is
// an ErrTooDeep error.
func ValidateValue(data []byte, i int) (int, error) {
	return validate(data, i, false)
}

// ValidateValueLax is ValidateValue for a value ValidateValue refused with
// an ErrUTF8 error: it lets strings hold bytes that are not UTF-8 and
// checks everything else, so that the connection can tell a message whose
// params are merely not UTF-8 (answered under its id) from a line that is
// not JSON at all.
func ValidateValueLax(data []byte, i int) (int, error) {
	return validate(data, i, true)
}

// ScanString validates the JSON string at data[i] == '"' and returns the
// offset past its closing quote and whether it holds escapes.
func ScanString(data []byte, i int) (end int, escaped bool, err error) {
	return scanString(data, i, false)
}

// SkipSpace returns the offset of the first byte at or after i that is not
// JSON whitespace.
func SkipSpace(data []byte, i int) int { return skipSpace(data, i) }

// Valid reports whether data is exactly one JSON value (with optional
// surrounding whitespace), using the same rules as the decoders.
func Valid(data []byte) bool {
	return Validate(data) == nil
}

// Validate is Valid with the reason.
func Validate(data []byte) error {
	end, err := validate(data, 0, false)
	if err != nil {
		return err
	}
	if skipSpace(data, end) != len(data) {
		return syntaxError(data, end, "trailing data")
	}
	return nil
}

// ObjectIter walks the members of one JSON object. The document must have
// been checked with Validate first (the generated entry points do it once):
// the iterator only finds value boundaries, fast, and reports structural
// surprises as errors rather than trusting them blindly. The zero value is
// unusable; call Reset first. It never allocates unless a key contains
// escapes.
type ObjectIter struct {
	data    []byte
	i       int // where the next member (or the closing brace) starts
	key     []byte
	kstart  int
	vstart  int
	vend    int  // -1 until the current value's end is known
	pending bool // a member is current and its separator not yet read
	prefix  bool // data may continue after the object
	end     int  // offset past the closing brace, once done
	err     error
	done    bool
}

// Reset starts iterating data, which must be one JSON object (surrounding
// whitespace allowed). A non-object is an ErrType error.
func (it *ObjectIter) Reset(data []byte) error {
	return it.reset(data, false)
}

// ResetPrefix starts iterating the JSON object at the start of data, which
// may continue after it; End reports where the object ended.
func (it *ObjectIter) ResetPrefix(data []byte) error {
	return it.reset(data, true)
}

func (it *ObjectIter) reset(data []byte, prefix bool) error {
	// Field by field: a composite literal assigned through the pointer
	// is built in a temporary and copied, which cost about a tenth of a
	// session/update's decode.
	it.data, it.i, it.key = data, 0, nil
	it.kstart, it.vstart, it.vend = 0, 0, -1
	it.pending, it.prefix, it.end = false, prefix, 0
	it.err, it.done = nil, false
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		it.done = true
		if i >= len(data) {
			it.err = syntaxError(data, i, "unexpected end of input")
		} else {
			it.err = typeError("object", data)
		}
		return it.err
	}
	it.i = skipSpace(data, i+1)
	if it.i < len(data) && data[it.i] == '}' {
		it.finish(it.i + 1)
	}
	return it.err
}

// finish ends the iteration at offset i, just past the closing brace.
func (it *ObjectIter) finish(i int) {
	it.done, it.end = true, i
	if !it.prefix && skipSpace(it.data, i) != len(it.data) {
		it.err = syntaxError(it.data, i, "trailing data")
	}
}

// settle finds the end of the current value (unless a consuming decoder
// reported it) and reads the separator after it.
func (it *ObjectIter) settle() bool {
	it.pending = false
	data := it.data
	if it.vend < 0 {
		end, err := fastSkip(data, it.vstart)
		if err != nil {
			it.err = err
			return false
		}
		it.vend = end
	}
	i := skipSpace(data, it.vend)
	switch {
	case i < len(data) && data[i] == ',':
		it.i = skipSpace(data, i+1)
	case i < len(data) && data[i] == '}':
		it.finish(i + 1)
	default:
		it.err = syntaxError(data, i, "expected ',' or '}'")
		it.done = true
		return false
	}
	return true
}

// Next advances to the next member; false at the end or on error (see Err).
// The current value is skipped lazily: a decoder that consumed it through
// Rest reports its length with Consume, and the value is not scanned twice.
func (it *ObjectIter) Next() bool {
	if it.pending && !it.settle() {
		return false
	}
	if it.done || it.err != nil {
		return false
	}
	data, i := it.data, it.i
	if i >= len(data) || data[i] != '"' {
		it.err = syntaxError(data, i, "expected object key")
		return false
	}
	it.kstart = i
	end, escaped, err := fastString(data, i)
	if err != nil {
		it.err = err
		return false
	}
	if escaped {
		it.key = unescape(data[i:end])
	} else {
		it.key = data[i+1 : end-1]
	}
	i = skipSpace(data, end)
	if i >= len(data) || data[i] != ':' {
		it.err = syntaxError(data, i, "expected ':'")
		return false
	}
	it.vstart = skipSpace(data, i+1)
	if it.vstart >= len(data) {
		it.err = syntaxError(data, it.vstart, "unexpected end of input")
		return false
	}
	it.vend = -1
	it.pending = true
	return true
}

// Key is the current member's unescaped key.
func (it *ObjectIter) Key() []byte { return it.key }

// Value is the current member's raw, validated value.
func (it *ObjectIter) Value() []byte {
	if it.vend < 0 {
		end, err := fastSkip(it.data, it.vstart)
		if err != nil {
			it.err = err
			return nil
		}
		it.vend = end
	}
	return it.data[it.vstart:it.vend]
}

// Rest is the input from the current value on, for a decoder that consumes
// the value and reports its length with Consume.
func (it *ObjectIter) Rest() []byte { return it.data[it.vstart:] }

// Consume records that the current value is n bytes long.
func (it *ObjectIter) Consume(n int) { it.vend = it.vstart + n }

// IsNull reports whether the current value is null, without scanning it.
func (it *ObjectIter) IsNull() bool { return it.data[it.vstart] == 'n' }

// Member is the current member's raw bytes, `"key":value` as in the input.
func (it *ObjectIter) Member() []byte {
	v := it.Value()
	if v == nil {
		return nil
	}
	return it.data[it.kstart:it.vend]
}

// End is the offset just past the object's closing brace, once Next has
// returned false without an error.
func (it *ObjectIter) End() int { return it.end }

// Err is the first syntax error met, if any.
func (it *ObjectIter) Err() error { return it.err }

// ArrayIter walks the items of one JSON array.
type ArrayIter struct {
	data []byte
	i    int
	n    int
	val  []byte
	err  error
	done bool
}

// Reset starts iterating data, which must be one JSON array.
func (it *ArrayIter) Reset(data []byte) error {
	*it = ArrayIter{data: data, n: -1}
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		it.done = true
		if i >= len(data) {
			it.err = syntaxError(data, i, "unexpected end of input")
		} else {
			it.err = typeError("array", data)
		}
		return it.err
	}
	it.i = skipSpace(data, i+1)
	if it.i < len(data) && data[it.i] == ']' {
		it.done = true
		if skipSpace(data, it.i+1) != len(data) {
			it.err = syntaxError(data, it.i+1, "trailing data")
		}
	}
	return it.err
}

// Next advances to the next item.
func (it *ArrayIter) Next() bool {
	if it.done || it.err != nil {
		return false
	}
	data := it.data
	start := it.i
	i, err := fastSkip(data, start)
	if err != nil {
		it.err = err
		return false
	}
	it.val = data[start:i]
	it.n++
	i = skipSpace(data, i)
	switch {
	case i < len(data) && data[i] == ',':
		it.i = skipSpace(data, i+1)
	case i < len(data) && data[i] == ']':
		it.done = true
		if skipSpace(data, i+1) != len(data) {
			it.err = syntaxError(data, i+1, "trailing data")
			return false
		}
	default:
		it.err = syntaxError(data, i, "expected ',' or ']'")
		it.done = true
		return false
	}
	return true
}

// Value is the current item's raw bytes.
func (it *ArrayIter) Value() []byte { return it.val }

// Index is the current item's index.
func (it *ArrayIter) Index() int { return it.n }

// Err is the first syntax error met, if any.
func (it *ArrayIter) Err() error { return it.err }

// IsNull reports whether the raw value is the literal null.
func IsNull(data []byte) bool {
	d := trimSpace(data)
	return len(d) == 4 && string(d) == "null"
}

// Tag finds the string member key at the top level of the object data (the
// discriminator of a tagged union) with one scan that stops at it. found is
// false when the member is absent; a present non-string tag is an ErrType
// error at key.
func Tag(data []byte, key string) (tag []byte, found bool, err error) {
	// Fast path: the tag is the first member, written compactly, with an
	// escape-free value; the scan below would stop there too.
	if n := len(key); len(data) > n+5 && data[0] == '{' && data[1] == '"' &&
		string(data[2:2+n]) == key && data[2+n] == '"' && data[3+n] == ':' && data[4+n] == '"' {
		rest := data[5+n:]
		if q := bytes.IndexByte(rest, '"'); q >= 0 && bytes.IndexByte(rest[:q], '\\') < 0 {
			return rest[:q], true, nil
		}
	}
	var it ObjectIter
	if err := it.ResetPrefix(data); err != nil {
		return nil, false, err
	}
	// The document was validated at the entry point, so the scan can stop
	// at the tag, which peers put first.
	for it.Next() {
		if string(it.Key()) == key {
			v := it.Value()
			if len(v) == 0 || v[0] != '"' {
				return nil, false, AtField(typeError("string", v), key)
			}
			tag, found = v, true
			break
		}
	}
	if err := it.Err(); err != nil {
		return nil, false, err
	}
	if !found {
		return nil, false, nil
	}
	if b := tag[1 : len(tag)-1]; !hasBackslash(b) {
		return b, true, nil
	}
	return unescape(tag), true, nil
}

func hasBackslash(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

// HasKey reports whether the object data has a top-level member key. data
// must already be validated (it is a value span from an iterator).
func HasKey(data []byte, key string) bool {
	var it ObjectIter
	if it.Reset(data) != nil {
		return false
	}
	for it.Next() {
		if string(it.Key()) == key {
			return true
		}
	}
	return false
}

// FirstItem returns the first item of the array data, if any.
func FirstItem(data []byte) ([]byte, bool) {
	var it ArrayIter
	if it.Reset(data) != nil || !it.Next() {
		return nil, false
	}
	return it.Value(), true
}

// fastString finds the end of the string at data[i] == '"' in a validated
// document and whether it holds escapes. Keys are short: testing a few
// words of one eight bytes at a time beats IndexByte's setup, twice.
func fastString(data []byte, i int) (int, bool, error) {
	for n, j := 0, i+1; n < 4 && j+8 <= len(data); n, j = n+1, j+8 {
		if m := quoteOrBackslash(binary.LittleEndian.Uint64(data[j:])); m != 0 {
			if j += firstMarked(m); data[j] == '"' {
				return j + 1, false, nil
			}
			end, err := fastStringEnd(data, i)
			return end, true, err
		}
	}
	end, err := fastStringEnd(data, i)
	if err != nil {
		return end, false, err
	}
	return end, bytes.IndexByte(data[i+1:end-1], '\\') >= 0, nil
}

// fastStringEnd is fastString without looking for escapes.
func fastStringEnd(data []byte, i int) (int, error) {
	j := i + 1
	// Short strings: eight bytes at a time beats IndexByte's setup there.
	for n := 0; n < 2 && j+8 <= len(data); n, j = n+1, j+8 {
		if m := quoteOrBackslash(binary.LittleEndian.Uint64(data[j:])); m != 0 {
			if j += firstMarked(m); data[j] == '"' {
				return j + 1, nil
			}
			j = i + 1 // escapes: take the careful path below from the start
			break
		}
	}
	for {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return len(data), syntaxError(data, i, "unterminated string")
		}
		q := j + k
		if data[q-1] != '\\' {
			return q + 1, nil
		}
		// Count the backslashes before the quote: an odd number escapes it.
		n := 0
		for p := q - 1; p > i && data[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

// fastSkip returns the offset past the value at data[i] in a validated
// document: strings are jumped over with IndexByte, containers by counting
// brackets outside strings.
func fastSkip(data []byte, i int) (int, error) {
	if i >= len(data) {
		return i, syntaxError(data, i, "unexpected end of input")
	}
	switch c := data[i]; {
	case c == '"':
		return fastStringEnd(data, i)
	case c == '{' || c == '[':
		depth := 0
		for i < len(data) {
			// Jump over bytes that cannot change the nesting.
			for i < len(data) && !structural[data[i]] {
				i++
			}
			if i >= len(data) {
				break
			}
			switch data[i] {
			case '"':
				end, err := fastStringEnd(data, i)
				if err != nil {
					return end, err
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return i, syntaxError(data, i, "unterminated container")
	default:
		// A literal or a number: up to the next delimiter.
		j := i
		for j < len(data) {
			switch data[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return j, syntaxError(data, i, "expected a value")
				}
				return j, nil
			}
			j++
		}
		return j, nil
	}
}

// Skip returns the length of the JSON value at the start of data (a
// validated document).
func Skip(data []byte) (int, error) {
	return fastSkip(data, skipSpace(data, 0))
}
