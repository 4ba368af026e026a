// Package jsonx is the hand-written runtime under the generated ACP codecs in
// acpkit.dev/acpsdk/gen: a validating, allocation-free JSON scanner, typed
// decode errors that carry the JSON path, raw-member retention for unknown
// fields, and the append-style encoders the generated MarshalJSON methods use.
//
// The generated code never goes through reflection: every object is decoded
// by iterating its members once with [ObjectIter] and switching on the key,
// and encoded by appending to a byte slice.
package jsonx

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"acpkit.dev/internal/jsonkind"
)

// Sentinel causes carried by [DecodeError]; test with errors.Is.
var (
	// ErrSyntax: the input is not valid JSON.
	ErrSyntax = errors.New("invalid JSON")
	// ErrType: a value has the wrong JSON type for its schema.
	ErrType = errors.New("wrong JSON type")
	// ErrMissingField: a required member is absent.
	ErrMissingField = errors.New("missing required field")
	// ErrInvalidValue: a value has the right JSON type but is not allowed
	// (out of range, not one of a closed enum's values, too short, …).
	ErrInvalidValue = errors.New("invalid value")
	// ErrEncode: a Go value cannot be encoded (nil required union,
	// invalid raw JSON, NaN, …).
	ErrEncode = errors.New("cannot encode")
	// ErrTooDeep: a value nests deeper than MaxDepth. It is a kind of
	// ErrSyntax (errors.Is matches both), told apart so that the
	// connection can answer the message the value is in.
	ErrTooDeep = fmt.Errorf("%w: nesting deeper than %d", ErrSyntax, MaxDepth)
)

func tooDeep(i int) error { return Errorf(ErrTooDeep, "at offset "+itoa(i)) }

// DecodeError reports why a JSON document does not decode into a schema
// type, and where: Path is a dotted path with [i] indices relative to the
// value being decoded ("update.content", "prompt[2].text"), empty for the
// value itself.
type DecodeError struct {
	Path string
	Err  error
}

// Error renders "path: cause", or just the cause at the root.
func (e *DecodeError) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

// Unwrap exposes the cause so errors.Is(err, ErrMissingField) works.
func (e *DecodeError) Unwrap() error { return e.Err }

// Errorf builds a root-level DecodeError whose cause wraps kind.
func Errorf(kind error, detail string) error {
	if detail == "" {
		return &DecodeError{Err: kind}
	}
	return &DecodeError{Err: &detailError{kind: kind, detail: detail}}
}

// detailError adds a human detail to a sentinel without fmt's allocations
// on the success path (it is only built on failure).
type detailError struct {
	kind   error
	detail string
}

func (e *detailError) Error() string { return e.kind.Error() + ": " + e.detail }
func (e *detailError) Unwrap() error { return e.kind }

// Missing reports that the required member key is absent; the key is the
// error's path so the message reads "update.content: missing required field".
func Missing(key string) error {
	return &DecodeError{Path: key, Err: ErrMissingField}
}

// AtField prefixes the path of err (a DecodeError from a member's value)
// with the member key. Other errors are wrapped into a DecodeError.
func AtField(err error, key string) error {
	key = quoteKey(key)
	var de *DecodeError
	if !errors.As(err, &de) {
		return &DecodeError{Path: key, Err: err}
	}
	switch {
	case de.Path == "":
		de.Path = key
	case de.Path[0] == '[':
		de.Path = key + de.Path
	default:
		de.Path = key + "." + de.Path
	}
	return de
}

// AtIndex prefixes the path of err with an array index.
func AtIndex(err error, i int) error {
	seg := "[" + strconv.Itoa(i) + "]"
	var de *DecodeError
	if !errors.As(err, &de) {
		return &DecodeError{Path: seg, Err: err}
	}
	switch {
	case de.Path == "":
		de.Path = seg
	case de.Path[0] == '[':
		de.Path = seg + de.Path
	default:
		de.Path = seg + "." + de.Path
	}
	return de
}

// typeError reports that want was expected where data's JSON kind was found.
func typeError(want string, data []byte) error {
	return Errorf(ErrType, "want "+want+", got "+jsonkind.Of(data))
}

// EncodeError reports a value that cannot be encoded at path.
func EncodeError(path string, detail string) error {
	return &DecodeError{Path: path, Err: &detailError{kind: ErrEncode, detail: detail}}
}

// quoteKey is used only when an error must show a key; keys that are not
// plain identifiers are quoted so paths stay unambiguous.
func quoteKey(k string) string {
	if strings.ContainsAny(k, ".[] \"") {
		return strconv.Quote(k)
	}
	return k
}
