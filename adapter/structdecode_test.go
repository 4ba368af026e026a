package adapter

import (
	"go/ast"
	"go/token"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// protocolMembers are member names of JSON-RPC envelopes and ACP messages.
// A struct field tagged with one is a segmentio (or encoding/json) decode
// of a protocol message, which matches names case-insensitively: it would
// fill "sessionId" from "SESSIONID", where gen and normalize.Member match
// exactly.
var protocolMembers = []string{"id", "method", "params", "result", "error", "sessionId", "update", "sessionUpdate",
	"content", "prompt", "stopReason", "toolCall", "toolCallId", "options", "optionId", "outcome"}

// measureDir reads the runtimes' own files (their transcripts, journals,
// rollouts), not protocol messages, so struct decoding stays allowed there.
const measureDir = "internal/measure"

// TestProtocolMessagesAreNotStructDecoded fails when a production file of
// the adapter module (acprun included) declares a struct field tagged with
// a protocol member name: protocol messages are read with gen's decoders or
// normalize.Member, both exact.
func TestProtocolMessagesAreNotStructDecoded(t *testing.T) {
	inspectProductionCode(t, []string{measureDir}, func(pos func(ast.Node) token.Position, n ast.Node) {
		field, ok := n.(*ast.Field)
		if !ok || field.Tag == nil {
			return
		}
		tag, err := strconv.Unquote(field.Tag.Value)
		require.NoError(t, err)
		name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
		if slices.Contains(protocolMembers, name) {
			t.Errorf("%s: a struct field tagged %q decodes a protocol message with case-folded names; use gen or normalize.Member", pos(field), name)
		}
	})
}
