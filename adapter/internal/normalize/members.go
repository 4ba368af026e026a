package normalize

import (
	"bytes"
	"errors"

	"github.com/segmentio/encoding/json"
)

// errTrailing: a value followed by more than whitespace.
var errTrailing = errors.New("data after the JSON value")

// DecodeMembers decodes the JSON value data into v, matching struct
// fields to members by their exact names, as the generated decoders do:
// a member whose name differs only in case ("SESSIONID") is another
// member, never the field's. Every adapter rule that reads a protocol
// message's members itself (EV-9, EV-10, DI-2, PM-1, SS-1, MS-5) decodes
// through here, so one message has one rule for its names.
func DecodeMembers(data []byte, v any) error {
	rest, err := json.Parse(data, v, json.DontMatchCaseInsensitiveStructFields)
	if err != nil {
		return err
	}
	if len(bytes.TrimLeft(rest, " \t\r\n")) > 0 {
		return errTrailing
	}
	return nil
}
