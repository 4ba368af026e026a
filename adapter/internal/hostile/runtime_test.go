package hostile

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPromptTurnMatchesMemberNamesExactly: the hostile runtime reads the
// prompt the adapter sent as gen reads it, by exact member names; "PROMPT"
// or "TEXT" only case-fold to the protocol's names and name no turn.
func TestPromptTurnMatchesMemberNamesExactly(t *testing.T) {
	for params, want := range map[string]int{
		`{"sessionId":"s","prompt":[{"type":"text","text":"turn 2"}]}`: 2,
		`{"sessionId":"s","prompt":[{"type":"text","text":"hello"}]}`:  -1,
		`{"sessionId":"s","PROMPT":[{"type":"text","text":"turn 2"}]}`: -1,
		`{"sessionId":"s","prompt":[{"type":"text","TEXT":"turn 2"}]}`: -1,
		`{"sessionId":"s","prompt":[]}`:                                -1,
		`{"sessionId":"s","prompt":"turn 2"}`:                          -1,
	} {
		assert.Equal(t, want, promptTurn([]byte(params)), params)
	}
}
