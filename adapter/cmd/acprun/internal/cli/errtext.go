package cli

import (
	"errors"
	"regexp"
	"strings"

	"acpkit.dev/adapter"
)

// jsonrpcSegment is how acpsdk renders a wire error's code.
var jsonrpcSegment = regexp.MustCompile(`^jsonrpc error (-?[0-9]+)$`)

// errText renders an error for a person or a script: the adapter's message,
// then only what its cause adds. The adapter's message for a runtime's
// refusal already quotes the runtime's words, and its cause (the wire error)
// repeats them after its code, so the words are written once and the code,
// when the message lacks it, follows in parentheses.
func errText(err error) string {
	var ae *adapter.Error
	if !errors.As(err, &ae) || ae != err || ae.Err == nil {
		return err.Error()
	}
	var added []string
	code := ""
	for _, seg := range strings.Split(ae.Err.Error(), ": ") {
		switch m := jsonrpcSegment.FindStringSubmatch(seg); {
		case strings.Contains(ae.Message, seg):
		case m != nil && strings.Contains(ae.Message, m[1]):
		case m != nil:
			code = m[1]
		default:
			added = append(added, seg)
		}
	}
	text := ae.Message
	if len(added) > 0 {
		text += ": " + strings.Join(added, ": ")
	}
	if code != "" {
		text += " (code " + code + ")"
	}
	return text
}
