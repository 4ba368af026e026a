package acpsdk

import (
	"errors"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/internal/jsonx"
)

// Finding the envelope members of a line and validating it are one pass:
// the top-level object is walked here, and each member's value is
// validated by jsonx (the validator the generated decoders use, so the
// connection and the decoders agree on depth and UTF-8) as it is stepped
// over. Every value comes back as a slice of the line.

// errNotObject: the line is not a JSON object (it may still be JSON).
var errNotObject = errors.New("not a JSON object")

// envelope validates line as one JSON object and records its JSON-RPC
// members. A member nested deeper than jsonx.MaxDepth, or holding a string
// that is not UTF-8 but JSON otherwise, does not make the line invalid: it
// is stepped over (a deep one without validation), named in w.refused,
// and the message it is in is refused by whoever reads that member. Any
// other error means the line is not JSON, or errNotObject that it is not
// an object.
func envelope(line []byte) (w wireMsg, err error) {
	i := jsonx.SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return wireMsg{}, errNotObject
	}
	i = jsonx.SkipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return w, trailing(line, i+1)
	}
	for {
		if i >= len(line) || line[i] != '"' {
			return wireMsg{}, errSyntax
		}
		keyEnd, escaped, err := jsonx.ScanString(line, i)
		if err != nil {
			return wireMsg{}, err
		}
		key := line[i+1 : keyEnd-1]
		if escaped {
			var k string
			if json.Unmarshal(line[i:keyEnd], &k) != nil {
				return wireMsg{}, errSyntax
			}
			key = []byte(k)
		}
		i = jsonx.SkipSpace(line, keyEnd)
		if i >= len(line) || line[i] != ':' {
			return wireMsg{}, errSyntax
		}
		i = jsonx.SkipSpace(line, i+1)
		valEnd, err := jsonx.ValidateValue(line, i)
		if errors.Is(err, jsonx.ErrUTF8) {
			// Everything else in the value must still be JSON.
			refused := err
			if valEnd, err = jsonx.ValidateValueLax(line, i); err == nil && w.refused == "" {
				w.refused, w.refusedErr = string(key), refused
			}
		}
		if errors.Is(err, jsonx.ErrTooDeep) {
			// Step over the rest by counting brackets (no recursion);
			// the value is never decoded.
			n, skipErr := jsonx.Skip(line[i:])
			if skipErr != nil {
				return wireMsg{}, err
			}
			if w.refused == "" {
				w.refused, w.refusedErr = string(key), err
			}
			valEnd, err = i+n, nil
		}
		if err != nil {
			return wireMsg{}, err
		}
		val := line[i:valEnd]
		// Exact, case-sensitive member names; the last duplicate wins.
		switch string(key) {
		case "jsonrpc":
			w.JSONRPC = val
		case "id":
			w.ID = val
		case "method":
			w.Method = val
		case "params":
			w.Params = val
		case "result":
			w.Result = val
		case "error":
			w.Error = val
		}
		i = jsonx.SkipSpace(line, valEnd)
		switch {
		case i < len(line) && line[i] == '}':
			return w, trailing(line, i+1)
		case i < len(line) && line[i] == ',':
			i = jsonx.SkipSpace(line, i+1)
		default:
			return wireMsg{}, errSyntax
		}
	}
}

var errSyntax = errors.New("line is not JSON")

// trailing checks that nothing but whitespace follows the object.
func trailing(line []byte, i int) error {
	if jsonx.SkipSpace(line, i) != len(line) {
		return errSyntax
	}
	return nil
}
