package acpsdk

import (
	"bytes"

	"github.com/segmentio/encoding/json"
)

// Finding the envelope members of a line fast: the line is validated once
// (segmentio's validator), then walked without decoding anything, trusting
// that validity: strings are skipped with IndexByte, containers by counting
// brackets outside strings. Every value comes back as a slice of the line.

// envelope walks the top-level members of a validated JSON object and
// records the JSON-RPC ones; ok is false when line is not an object. The
// walk trusts the validator but still checks every bound, so input it did
// not expect ends the walk (ok false) instead of a panic.
func envelope(line []byte) (w wireMsg, ok bool) {
	i := skipWS(line, 0)
	if i >= len(line) || line[i] != '{' {
		return w, false
	}
	i = skipWS(line, i+1)
	if i < len(line) && line[i] == '}' {
		return w, true
	}
	for {
		if i >= len(line) || line[i] != '"' {
			return wireMsg{}, false
		}
		keyEnd := skipString(line, i)
		if keyEnd > len(line) {
			return wireMsg{}, false
		}
		key := line[i+1 : keyEnd-1]
		i = skipWS(line, keyEnd)
		if i >= len(line) || line[i] != ':' {
			return wireMsg{}, false
		}
		i = skipWS(line, i+1)
		if i >= len(line) {
			return wireMsg{}, false
		}
		valEnd := skipValue(line, i)
		if valEnd > len(line) || valEnd == i {
			return wireMsg{}, false
		}
		val := line[i:valEnd]
		if bytes.IndexByte(key, '\\') >= 0 {
			var k string
			if json.Unmarshal(line[keyEnd-len(key)-2:keyEnd], &k) == nil {
				key = []byte(k)
			}
		}
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
		i = skipWS(line, valEnd)
		switch {
		case i < len(line) && line[i] == '}':
			return w, true
		case i < len(line) && line[i] == ',':
			i = skipWS(line, i+1)
		default:
			return wireMsg{}, false
		}
	}
}

// structural marks the bytes that matter when skipping a container.
var structural = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i], or
// len(b)+1 when it is not terminated.
func skipString(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b) + 1
		}
		end := j + k
		n := 0 // backslashes right before the quote
		for p := end - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return end + 1
		}
		j = end + 1
	}
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			for j < len(b) && !structural[b[j]] {
				j++
			}
			if j >= len(b) {
				break
			}
			switch b[j] {
			case '"':
				j = skipString(b, j) - 1
				if j >= len(b) {
					return len(b) + 1
				}
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b) + 1
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}
