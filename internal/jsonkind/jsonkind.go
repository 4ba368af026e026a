// Package jsonkind names the JSON type of a value, for the messages that
// say what was found where something else was expected ("want a string,
// got number"). acpsdk's decoders (acpsdk/internal/jsonx) and the
// adapter's MCP configuration parser both word their errors with it.
package jsonkind

// Of names the JSON type of the valid JSON value data by its first byte
// after whitespace: "object", "array", "string", "boolean", "null" or
// "number", and "nothing" when there is no value.
func Of(data []byte) string {
	i := 0
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	if i == len(data) {
		return "nothing"
	}
	switch data[i] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}
