package jsonx

import (
	"bytes"
	"encoding/binary"
)

// validate checks the JSON value starting at data[i] (whitespace before it
// allowed) and returns the offset just past it. It is the validator of the
// connection and of the public entry points: one loop over the tokens,
// with containers on a stack of bits rather than on the call stack (deep
// input costs no stack), and strings tested eight bytes at a time inline.
// Nesting is counted from this value: a container opened at depth MaxDepth
// is an ErrTooDeep error. With lax, a string may hold bytes that are not
// UTF-8.
func validate(data []byte, i int, lax bool) (int, error) {
	// objects has bit d set when the container at depth d is an object.
	var objects [MaxDepth/64 + 1]uint64
	depth := 0
	key := false // the next token is an object's key
	for {
		if i < len(data) && data[i] <= ' ' {
			i = skipSpace(data, i)
		}
		if i >= len(data) {
			return i, syntaxError(data, i, "unexpected end of input")
		}
		c := data[i]
		switch {
		case c == '"':
			// A string, eight bytes at a time until the first byte a
			// string scan must look at; the careful walk takes over at
			// anything but the closing quote.
			j := i + 1
			if rest := data[j:]; len(rest) >= 16 {
				if m := specialMask(binary.LittleEndian.Uint64(rest)); m != 0 {
					j += firstMarked(m)
				} else if m := specialMask(binary.LittleEndian.Uint64(rest[8:])); m != 0 {
					j += 8 + firstMarked(m)
				} else if q := bytes.IndexByte(rest[16:], '"'); q >= 0 && plain(rest[16:16+q]) {
					j += 16 + q
				}
			}
			if j < len(data) && data[j] == '"' {
				i = j + 1
			} else {
				end, _, err := scanStringFrom(data, i, j, lax)
				if err != nil {
					return end, err
				}
				i = end
			}
			if key {
				if i < len(data) && data[i] <= ' ' {
					i = skipSpace(data, i)
				}
				if i >= len(data) || data[i] != ':' {
					return i, syntaxError(data, i, "expected ':'")
				}
				i++
				key = false
				continue
			}
		case key:
			return i, syntaxError(data, i, "expected object key")
		case c == '{' || c == '[':
			if depth >= MaxDepth {
				return i, tooDeep(i)
			}
			if c == '{' {
				objects[depth>>6] |= 1 << (depth & 63)
			} else {
				objects[depth>>6] &^= 1 << (depth & 63)
			}
			depth++
			i = skipSpace(data, i+1)
			if i < len(data) && data[i] == c+2 { // '}' or ']'
				i++
				depth--
				break
			}
			key = c == '{'
			continue
		case c == 't':
			if len(data)-i < 4 || string(data[i:i+4]) != "true" {
				return i, syntaxError(data, i, "invalid literal")
			}
			i += 4
		case c == 'f':
			if len(data)-i < 5 || string(data[i:i+5]) != "false" {
				return i, syntaxError(data, i, "invalid literal")
			}
			i += 5
		case c == 'n':
			if len(data)-i < 4 || string(data[i:i+4]) != "null" {
				return i, syntaxError(data, i, "invalid literal")
			}
			i += 4
		case c == '-' || c >= '0' && c <= '9':
			end, err := scanNumber(data, i)
			if err != nil {
				return end, err
			}
			i = end
		default:
			return i, syntaxError(data, i, "unexpected character")
		}
		// A value ended at i: close the containers it ends, or go on to
		// the next member or item.
		for {
			if depth == 0 {
				return i, nil
			}
			if i < len(data) && data[i] <= ' ' {
				i = skipSpace(data, i)
			}
			inObject := objects[(depth-1)>>6]&(1<<((depth-1)&63)) != 0
			if i < len(data) && data[i] == ',' {
				i++
				key = inObject
				break
			}
			if inObject && i < len(data) && data[i] == '}' || !inObject && i < len(data) && data[i] == ']' {
				i++
				depth--
				continue
			}
			if inObject {
				return i, syntaxError(data, i, "expected ',' or '}'")
			}
			return i, syntaxError(data, i, "expected ',' or ']'")
		}
	}
}
