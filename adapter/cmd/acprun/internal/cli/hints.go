package cli

import (
	"path/filepath"
	"strings"
)

// hint is advice for one known refusal of one runtime, matched on the
// runtime's own words or error code, never on a guess. The table is
// documented in the README ("When a runtime refuses"); each entry
// was measured against the runtime named.
type hint struct {
	// program is the runtime's executable name, or "" for any.
	program string
	// words must appear in the failure's text or the runtime's stderr.
	words []string
	// text is the advice.
	text string
}

// hints is the table. Matching is case-sensitive: these are the runtimes'
// own strings.
var hints = []hint{
	{
		// gemini --acp answers session/new with -32000 and these words
		// when no key is configured.
		words: []string{"Gemini API key is missing or not configured"},
		text:  "gemini reads its key from the environment: set GEMINI_API_KEY (or configure gemini's own login) where acprun runs",
	},
	{
		// codex-acp answers session/new with -32000 "Authentication
		// required" unless it is told to log in by itself; this adapter
		// never calls authenticate (by design).
		program: "codex-acp",
		words:   []string{"-32000"},
		text:    `codex-acp logs in by itself only when told how: set DEFAULT_AUTH_REQUEST='{"methodId":"api-key"}' and OPENAI_API_KEY where acprun runs`,
	},
	{
		// claude-agent-acp's CLI refuses bypass-permission modes as root
		// (its error code bypass_root, or these words on stderr).
		words: []string{"bypass_root"},
		text:  "claude-agent-acp refuses to bypass permissions as root outside a sandbox: run as another user, or set IS_SANDBOX=1 if this machine is one",
	},
	{
		words: []string{"--dangerously-skip-permissions cannot be used with root/sudo privileges"},
		text:  "claude-agent-acp refuses to bypass permissions as root outside a sandbox: run as another user, or set IS_SANDBOX=1 if this machine is one",
	},
}

// hintsFor returns the advice that matches a failure of command, whose
// text is failure and whose stderr tail is stderr; each piece of advice
// once.
func hintsFor(command, failure string, stderr []string) []string {
	program := ""
	if f := strings.Fields(command); len(f) > 0 {
		program = strings.TrimSuffix(filepath.Base(f[0]), ".exe")
	}
	haystack := failure + "\n" + strings.Join(stderr, "\n")
	var out []string
	seen := map[string]bool{}
	for _, h := range hints {
		if h.program != "" && h.program != program {
			continue
		}
		matched := true
		for _, w := range h.words {
			matched = matched && strings.Contains(haystack, w)
		}
		if matched && !seen[h.text] {
			seen[h.text] = true
			out = append(out, h.text)
		}
	}
	return out
}
