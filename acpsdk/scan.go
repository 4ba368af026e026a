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
		key, keyEnd := envelopeKey(line, i)
		if key == nil {
			var escaped bool
			if keyEnd, escaped, err = jsonx.ScanString(line, i); err != nil {
				return wireMsg{}, err
			}
			key = line[i+1 : keyEnd-1]
			if escaped {
				var k string
				if json.Unmarshal(line[i:keyEnd], &k) != nil {
					return wireMsg{}, errSyntax
				}
				key = []byte(k)
			}
		}
		i = jsonx.SkipSpace(line, keyEnd)
		if i >= len(line) || line[i] != ':' {
			return wireMsg{}, errSyntax
		}
		i = jsonx.SkipSpace(line, i+1)
		valEnd, err := jsonx.ValidateValue(line, i)
		if err != nil {
			if valEnd, err = w.refuse(line, i, key, err); err != nil {
				return wireMsg{}, err
			}
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

// envelopeKey recognises the key at line[i] == '"' when it is one of the
// members a message has, written plainly (as every peer writes them), and
// returns it without its quotes and the offset past it; a nil key means it
// must be scanned.
func envelopeKey(line []byte, i int) (key []byte, end int) {
	rest := line[i:]
	if len(rest) < 2 {
		return nil, i
	}
	n := 0
	switch rest[1] {
	case 'j':
		if hasName(rest, `"jsonrpc"`) {
			n = len(`"jsonrpc"`)
		}
	case 'm':
		if hasName(rest, `"method"`) {
			n = len(`"method"`)
		}
	case 'p':
		if hasName(rest, `"params"`) {
			n = len(`"params"`)
		}
	case 'i':
		if hasName(rest, `"id"`) {
			n = len(`"id"`)
		}
	case 'r':
		if hasName(rest, `"result"`) {
			n = len(`"result"`)
		}
	case 'e':
		if hasName(rest, `"error"`) {
			n = len(`"error"`)
		}
	}
	if n == 0 {
		return nil, i
	}
	return rest[1 : n-1], i + n
}

// hasName reports whether b starts with name, a constant: the comparison
// is then a few loads, not a call.
func hasName(b []byte, name string) bool {
	return len(b) >= len(name) && string(b[:len(name)]) == name
}

// refuse deals with err, the failure to validate the member key's value at
// line[i]: a value nested too deep, or holding strings that are not UTF-8
// but JSON otherwise, is stepped over and the member named in w.refused
// (the first one); it returns the offset past the value. Any other error
// is returned.
func (w *wireMsg) refuse(line []byte, i int, key []byte, err error) (int, error) {
	refused := err
	end := i
	if errors.Is(err, jsonx.ErrUTF8) {
		// Everything else in the value must still be JSON.
		end, err = jsonx.ValidateValueLax(line, i)
	}
	if errors.Is(err, jsonx.ErrTooDeep) {
		// Step over the rest by counting brackets (no recursion); the
		// value is never decoded.
		n, skipErr := jsonx.Skip(line[i:])
		if skipErr != nil {
			return i, err
		}
		end, err = i+n, nil
	}
	if err != nil {
		return end, err
	}
	if w.refused == "" {
		w.refused, w.refusedErr = string(key), refused
	}
	return end, nil
}

// trailing checks that nothing but whitespace follows the object.
func trailing(line []byte, i int) error {
	if jsonx.SkipSpace(line, i) != len(line) {
		return errSyntax
	}
	return nil
}
