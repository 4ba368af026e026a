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
	{
		// Copilot CLI answers session/new with -32000 "Authentication
		// required" (no other words) when it has neither a GitHub login
		// nor a model provider of its own (Copilot CLI 1.0.102).
		program: "copilot",
		words:   []string{"-32000", "Authentication required"},
		text: "copilot needs a GitHub login or a model provider of its own: set COPILOT_GITHUB_TOKEN (or GH_TOKEN, GITHUB_TOKEN) to a token with Copilot access, " +
			"or bring your own model with COPILOT_PROVIDER_BASE_URL, COPILOT_PROVIDER_API_KEY and COPILOT_MODEL, where acprun runs",
	},
	{
		// Cline answers session/new with -32000 and these words when no
		// provider is configured (cline 3.0.65); the methods it advertises
		// are browser sign-ins.
		words: []string{"Call authenticate before starting a session"},
		text: "cline has no model provider configured: run `cline auth -p PROVIDER -k KEY -m MODEL` once (for an OpenAI-compatible endpoint add `-b BASE_URL`), " +
			"or set CLINE_PROVIDER and CLINE_API_KEY where acprun runs",
	},
	{
		// Qwen Code answers session/new with -32000 and these words, its
		// one advertised method being the OpenAI key (qwen-code 0.24.4).
		words: []string{"Use Qwen Code CLI to authenticate first"},
		text:  "qwen reads an OpenAI-compatible key from the environment: set OPENAI_API_KEY (and OPENAI_BASE_URL and OPENAI_MODEL for another endpoint than OpenAI's) where acprun runs",
	},
	{
		// The session started, and the first model call was refused:
		// Cline answers session/prompt with -32000 "Authentication
		// required: <the provider's words>"; Qwen Code with -32603
		// "Internal error" and the status only in the error's data, which
		// its stderr shows as details: '401 …'.
		words: []string{"session/prompt error -32000"},
		text:  keyRejected,
	},
	{
		program: "qwen",
		words:   []string{"session/prompt error -32603", "details: '401"},
		text:    keyRejected,
	},
	{
		// Cline answers -32000 only when the provider's words name the
		// status; with OpenAI's own words for a bad key it answers -32603
		// "Internal error: Incorrect API key provided" (cline 3.0.65).
		words: []string{"session/prompt error -32603", "Incorrect API key provided"},
		text:  keyRejected,
	},
}

// keyRejected is the advice for a key the model provider refused at the
// session's first model call.
const keyRejected = "the session started but the model provider rejected the runtime's key at the first model call: check the key (and the endpoint it is sent to) the runtime reads"

// hintsFor returns the advice that matches a failure of command, whose
// text is failure and whose stderr tail is stderr; each piece of advice
// once.
func hintsFor(command, failure string, stderr []string) []string {
	program := programOf(command)
	haystack := failure + "\n" + strings.Join(stderr, "\n")
	var out []string
	seen := map[string]bool{}
	for _, h := range hints {
		if h.matches(program, haystack) && !seen[h.text] {
			seen[h.text] = true
			out = append(out, h.text)
		}
	}
	return out
}

// matches reports whether h applies to a failure of program whose words
// (the failure's text and the stderr tail) are haystack.
func (h hint) matches(program, haystack string) bool {
	if h.program != "" && h.program != program {
		return false
	}
	for _, w := range h.words {
		if !strings.Contains(haystack, w) {
			return false
		}
	}
	return true
}

// programOf is the executable's name in command, seen through env and its
// NAME=VALUE assignments (`env OPENAI_API_KEY=… qwen --acp` is qwen).
func programOf(command string) string {
	f := strings.Fields(command)
	if len(f) > 0 && filepath.Base(f[0]) == "env" {
		f = f[1:]
		for len(f) > 0 && strings.Contains(f[0], "=") {
			f = f[1:]
		}
	}
	if len(f) == 0 {
		return ""
	}
	return strings.TrimSuffix(filepath.Base(f[0]), ".exe")
}
