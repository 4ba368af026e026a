package jsonx

import (
	"encoding/binary"
	stdjson "encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var validCases = []string{
	`{}`, `[]`, `0`, `-0`, `1.5e-3`, `"a\"b\\c\u00e9\n"`, `true`, `false`, `null`,
	` {"a" : [1, {"b":null}] , "c":"\ud83d\ude00"} `, `"日本"`, `12345678901234567890`,
}

var invalidCases = []string{
	``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `01`, `1.`, `.5`, `-`, `1e`, `+1`,
	`"\x"`, `"\u12"`, "\"a\x01\"", "\"\xff\"", `tru`, `nul`, `{} {}`, `"unterminated`, `{1:2}`,
	`[1 2]`, `{"a":1 "b":2}`, strings.Repeat("[", MaxDepth+5) + strings.Repeat("]", MaxDepth+5),
}

func TestValidateAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validCases {
		require.NoError(t, Validate([]byte(c)), c)
		require.True(t, stdjson.Valid([]byte(c)), c)
	}
	for _, c := range invalidCases {
		err := Validate([]byte(c))
		require.Error(t, err, c)
		require.ErrorIs(t, err, ErrSyntax, c)
	}
}

func TestObjectIter(t *testing.T) {
	data := []byte(` {"a":1, "b\u0031" : {"x":[1,"]}"]} ,"c":"}"} `)
	var it ObjectIter
	require.NoError(t, it.Reset(data))
	var keys, vals, members []string
	for it.Next() {
		keys = append(keys, string(it.Key()))
		vals = append(vals, string(it.Value()))
		members = append(members, string(it.Member()))
	}
	require.NoError(t, it.Err())
	require.Equal(t, []string{"a", "b1", "c"}, keys)
	require.Equal(t, []string{"1", `{"x":[1,"]}"]}`, `"}"`}, vals)
	require.Equal(t, `"b\u0031" : {"x":[1,"]}"]}`, members[1])

	require.ErrorIs(t, it.Reset([]byte(`[1]`)), ErrType)
	require.False(t, it.Next())
}

func TestTag(t *testing.T) {
	tag, ok, err := Tag([]byte(`{"x":{"type":"no"},"type":"te\u0078t"}`), "type")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "text", string(tag))
	_, ok, err = Tag([]byte(`{"x":1}`), "type")
	require.NoError(t, err)
	require.False(t, ok)
	_, _, err = Tag([]byte(`{"type":1}`), "type")
	var de *DecodeError
	require.True(t, errors.As(err, &de))
	require.Equal(t, "type", de.Path)
	require.ErrorIs(t, err, ErrType)
}

// TestTagFirstMember covers the compact first-member fast path: it must
// give what the full scan gives, and leave escaped tags and keys to it.
func TestTagFirstMember(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{`{"type":"text","text":"hi"}`, "text"},
		{`{"type":"a","type":"b"}`, "a"}, // the first one wins, as in the scan
		{`{"type":"te\u0078t"}`, "text"},
		{`{"typ\u0065":"text"}`, "text"},
		{`{"types":"x","type":"text"}`, "text"},
		{`{"type":""}`, ""},
	} {
		tag, ok, err := Tag([]byte(c.data), "type")
		require.NoError(t, err, c.data)
		require.True(t, ok, c.data)
		require.Equal(t, c.want, string(tag), c.data)
	}
	_, ok, err := Tag([]byte(`{"type"`), "type")
	require.False(t, ok)
	require.Error(t, err)
}

// tagSkipFields describes a variant with one member, a, for
// TestDecoderSkipsLeadingTag.
var tagSkipFields = NewFields(F("a", Omit))

// decodeTagSkip is a generated-style decodeAt for tagSkipFields.
func decodeTagSkip(data []byte, skip []string) (a string, m Members, n int, err error) {
	var d Decoder
	for d.Begin(data, tagSkipFields, skip); d.Next(); {
		switch string(d.Key()) {
		case "a":
			if v, err := String(d.At(0).Value()); d.Ok(err) {
				a = v
			}
		default:
			d.Extra(&m, skip)
		}
	}
	n, err = d.End(&m, skip)
	return a, m, n, err
}

// A leading compact tag is stepped over by Begin; every other spelling
// takes the member-by-member walk. Both must decode alike: the tag is
// dropped, the rest kept, the length and the member order right.
func TestDecoderSkipsLeadingTag(t *testing.T) {
	for _, c := range []struct {
		data, a    string
		extra, n   int
		disordered bool
	}{
		{`{"type":"x","a":"1"}`, "1", 0, 20, false},
		{`{"type":"x"},"after"`, "", 0, 12, false},
		{`{"type":"x","b":2,"a":"1"}`, "1", 1, 26, true},
		{`{"type":"x\"y","a":"1"}`, "1", 0, 23, false},
		{`{"type": "x","a":"1"}`, "1", 0, 21, false},
		{`{"type":"x" ,"a":"1"}`, "1", 0, 21, false},
		{`{"type":1,"a":"1"}`, "1", 0, 18, false},
		{`{"a":"1","type":"x"}`, "1", 0, 20, true},
		{`{"typ":"x","a":"1"}`, "1", 1, 19, true},
	} {
		a, m, n, err := decodeTagSkip([]byte(c.data), []string{"type"})
		require.NoError(t, err, c.data)
		require.Equal(t, c.a, a, c.data)
		require.Equal(t, c.extra, m.Len(), c.data)
		require.Equal(t, c.n, n, c.data)
		require.Equal(t, c.disordered, HasLayout(m), c.data)
	}
}

func TestScalars(t *testing.T) {
	s, err := String([]byte(`"a\tb"`))
	require.NoError(t, err)
	require.Equal(t, "a\tb", s)
	_, err = String([]byte(`1`))
	require.ErrorIs(t, err, ErrType)

	u, err := Uint64([]byte(`18446744073709551615`))
	require.NoError(t, err)
	require.Equal(t, uint64(18446744073709551615), u)
	_, err = Uint64([]byte(`18446744073709551616`))
	require.ErrorIs(t, err, ErrInvalidValue)
	_, err = Uint16([]byte(`-1`))
	require.ErrorIs(t, err, ErrInvalidValue)
	_, err = Uint16([]byte(`1.0`))
	require.ErrorIs(t, err, ErrType)
	i, err := Int64([]byte(`-9223372036854775808`))
	require.NoError(t, err)
	require.Equal(t, int64(-9223372036854775808), i)
	_, err = Int32([]byte(`2147483648`))
	require.ErrorIs(t, err, ErrInvalidValue)
	f, err := Float([]byte(`1e3`))
	require.NoError(t, err)
	require.Equal(t, 1000.0, f)
	_, err = Float([]byte(`1e999`))
	require.ErrorIs(t, err, ErrInvalidValue)
	_, err = Bool([]byte(`"true"`))
	require.ErrorIs(t, err, ErrType)

	b, err := AppendFloat(nil, 1e21)
	require.NoError(t, err)
	require.Equal(t, "1e+21", string(b))
	b, err = EncFloatNotInt(nil, 3)
	require.NoError(t, err)
	require.Equal(t, "3.0", string(b))
	_, err = AppendFloat(nil, stdNaN())
	require.ErrorIs(t, err, ErrEncode)
}

func stdNaN() float64 {
	var zero float64
	return zero / zero
}

func TestListSkipInvalidAndPaths(t *testing.T) {
	l, err := ListOf([]byte(`[1,"x",2]`), true, Int64)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2}, l)
	_, err = ListOf([]byte(`[1,"x",2]`), false, Int64)
	var de *DecodeError
	require.True(t, errors.As(err, &de))
	require.Equal(t, "[1]", de.Path)
	l, err = ListOf([]byte(`[]`), false, Int64)
	require.NoError(t, err)
	require.NotNil(t, l)

	m, err := MapOf([]byte(`{"a":"x","b.c":"y"}`), String)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"a": "x", "b.c": "y"}, m)
	_, err = MapOf([]byte(`{"a.b":1}`), String)
	require.True(t, errors.As(err, &de))
	require.Equal(t, `"a.b"`, de.Path)
	out, err := EncMap(nil, map[string]string{"b": "2", "a": "1"}, EncString)
	require.NoError(t, err)
	require.Equal(t, `{"a":"1","b":"2"}`, string(out))
}

func TestErrorPaths(t *testing.T) {
	err := AtField(AtIndex(AtField(Missing("text"), "content"), 2), "prompt")
	require.EqualError(t, err, "prompt[2].content.text: missing required field")
	require.ErrorIs(t, err, ErrMissingField)
	err = AtField(errors.New("plain"), "x")
	require.EqualError(t, err, "x: plain")
}

func TestMembers(t *testing.T) {
	var m Members
	require.Equal(t, 0, m.Len())
	AddMember(&m, []byte(`"a":1`))
	AddMember(&m, []byte(`"b" : [2]`))
	require.Equal(t, 2, m.Len())
	v, ok := m.Get("b")
	require.True(t, ok)
	require.Equal(t, "[2]", string(v))
	require.Equal(t, `{"x":0,"a":1,"b" : [2]`, string(AppendMembers([]byte(`{"x":0`), m)))
	require.NoError(t, m.Set("a", []byte(`"one"`)))
	require.Equal(t, `{"a":"one","b":[2]`, string(AppendMembers([]byte(`{`), m)))
	m.Delete("a")
	_, ok = m.Get("a")
	require.False(t, ok)
	require.Error(t, m.Set("c", []byte(`{`)))
}

func TestObjectWithoutAndSep(t *testing.T) {
	raw, err := ObjectWithout([]byte(`{"id":1,"type":"x","v":2}`), []string{"id"})
	require.NoError(t, err)
	require.Equal(t, `{"type":"x","v":2}`, string(raw))
	b, err := AppendObjectMembers([]byte(`{"id":1`), raw)
	require.NoError(t, err)
	require.Equal(t, `{"id":1,"type":"x","v":2`, string(b))
	require.Equal(t, "[", string(Sep([]byte("["))))
	require.Equal(t, "1,", string(Sep([]byte("1"))))
}

// FuzzValidate: the validating scanner agrees with encoding/json on what is
// JSON (except that it also requires UTF-8, as RFC 8259 does, where
// encoding/json would substitute U+FFFD), and never panics.
func FuzzValidate(f *testing.F) {
	for _, c := range append(append([]string{}, validCases...), invalidCases[:len(invalidCases)-1]...) {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ours := Validate(data) == nil
		if want := stdjson.Valid(data) && utf8.Valid(data); ours != want {
			t.Fatalf("Validate=%v, want %v for %q", ours, want, data)
		}
		if !ours {
			return
		}
		// A valid document iterates without error when it is an object.
		var it ObjectIter
		if it.Reset(data) == nil {
			for it.Next() {
				if Validate(it.Value()) != nil {
					t.Fatalf("member value %q is not valid", it.Value())
				}
			}
			if it.Err() != nil {
				t.Fatalf("iterating %q: %v", data, it.Err())
			}
		}
	})
}

// FuzzString: decoding a valid string equals encoding/json's decoding.
func FuzzString(f *testing.F) {
	for _, c := range []string{`"a"`, `"\u00e9\n"`, `"\ud800"`, `"\\\""`, `""`} {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if Validate(data) != nil || KindOf(data) != KindString {
			return
		}
		got, err := String(trimSpace(data))
		if err != nil {
			t.Fatalf("String(%q): %v", data, err)
		}
		var want string
		if err := stdjson.Unmarshal(data, &want); err != nil {
			t.Fatalf("encoding/json rejects %q: %v", data, err)
		}
		if got != want {
			t.Fatalf("String(%q) = %q, encoding/json says %q", data, got, want)
		}
		// And it re-encodes to something that decodes the same.
		var back string
		if err := stdjson.Unmarshal(AppendString(nil, got), &back); err != nil || back != got {
			t.Fatalf("AppendString(%q) does not round-trip: %q %v", got, back, err)
		}
	})
}

func TestSwarSpecialAgreesWithTable(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 8; pos++ {
			var b [8]byte
			for i := range b {
				b[i] = 'a'
			}
			b[pos] = byte(c)
			x := uint64(0)
			for i := 7; i >= 0; i-- {
				x = x<<8 | uint64(b[i])
			}
			require.Equal(t, strSpecial[c], swarSpecial(x), "byte %#x at %d", c, pos)
		}
	}
}

// TestSDK10_StringEndFoundAtEveryOffset: in a validated document the
// trusted scans (fastString for keys, fastStringEnd for values) find a
// string's end past escaped quotes and backslashes at every offset, and
// fastString tells whether it holds escapes.
func TestSDK10_StringEndFoundAtEveryOffset(t *testing.T) {
	for _, mid := range []string{"", `\"`, `\\`, `\\\"`, `\n`, "é", "\u00e9"} {
		for at := range 40 {
			str := `"` + strings.Repeat("a", at) + mid + strings.Repeat("b", 40-at) + `"`
			for _, after := range []string{"", `:1}`, `,"k":"v"}`} {
				doc := []byte(str + after)
				require.True(t, stdjson.Valid([]byte(str)), str)
				end, err := fastStringEnd(doc, 0)
				require.NoError(t, err)
				require.Equal(t, len(str), end, "fastStringEnd(%q)", doc)
				end, escaped, err := fastString(doc, 0)
				require.NoError(t, err)
				require.Equal(t, len(str), end, "fastString(%q)", doc)
				require.Equal(t, strings.Contains(mid, `\`), escaped, "fastString(%q) escaped", doc)
				end, escaped, err = scanString(doc, 0, false)
				require.NoError(t, err)
				require.Equal(t, len(str), end, "scanString(%q)", doc)
				require.Equal(t, strings.Contains(mid, `\`), escaped, "scanString(%q) escaped", doc)
			}
		}
	}
}

// TestSDK10_FirstMarkIsTheFirstSpecialByte: the word-at-a-time tests
// find the first byte the string scans must stop at, exactly, whatever
// follows it (a borrow may mark later bytes too) and whatever plain bytes
// come before it.
func TestSDK10_FirstMarkIsTheFirstSpecialByte(t *testing.T) {
	word := func(b [8]byte) uint64 { return binary.LittleEndian.Uint64(b[:]) }
	isQB := func(c byte) bool { return c == '"' || c == '\\' }
	fillers := []byte{' ', '!', '#', '[', ']', '~', 'a', 0x7f}
	for c := range 256 {
		for first := range 8 {
			for _, after := range []byte{0x00, 0x1f, '"', '\\', 0x80, 0xff, 'a'} {
				for _, fill := range fillers {
					var b [8]byte
					for i := range b {
						b[i] = fill
					}
					b[first] = byte(c)
					for i := first + 1; i < 8; i++ {
						b[i] = after
					}
					x := word(b)
					if strSpecial[c] {
						require.Equal(t, first, firstMarked(specialMask(x)), "special %#x at %d, then %#x", c, first, after)
					}
					if isQB(byte(c)) {
						require.Equal(t, first, firstMarked(quoteOrBackslash(x)), "%q at %d, then %#x", c, first, after)
					}
					if !strSpecial[c] && !strSpecial[after] {
						require.Zero(t, specialMask(x), "%q", b)
					}
					if !isQB(byte(c)) && !isQB(after) {
						require.Zero(t, quoteOrBackslash(x), "%q", b)
					}
				}
			}
		}
	}
}

// TestSDK10_StringScanFindsEverySpecialByte: the string scan tests eight
// and sixteen bytes at a time; a byte it must look at (a control
// character, an escape, invalid UTF-8) is found at every offset of a long
// string, as encoding/json finds it.
func TestSDK10_StringScanFindsEverySpecialByte(t *testing.T) {
	for _, special := range []string{"\x01", "\x1f", `\n`, `\q`, "\xff", "é", `\"`, `"`} {
		for at := range 40 {
			in := []byte(`"` + strings.Repeat("a", at) + special + strings.Repeat("b", 40-at) + `"`)
			want := stdjson.Valid(in) && utf8.Valid(in)
			if got := Validate(in) == nil; got != want {
				t.Fatalf("Validate(%q) = %v, want %v", in, got, want)
			}
		}
	}
}
