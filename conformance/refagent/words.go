package refagent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrWord is the kind of an unknown or malformed word in --words.
var ErrWord = errors.New("refagent: bad word")

// Script is what one turn does, decided by the words of its prompt plus the
// --words flag.
type Script struct {
	Text, Thought, Plan, Tools bool
	// Permission is "", "refusable" (a reject option is offered) or
	// "allow-only"; PermissionKind is its tool call's kind (default
	// delete).
	Permission     string
	PermissionKind string
	// Write asks to write a file in the session's directory and writes it
	// only when allowed.
	Write bool
	// ErrorData puts the cause of ErrorCode in the error's data.
	ErrorData bool

	Elicit      bool
	CallUnknown bool
	// StopReason ends the turn (any string, also one the schema lacks).
	StopReason   string
	Slow         bool
	IgnoreCancel bool
	// Exit, when set, makes the process exit mid-turn with this status.
	Exit          *int
	Oversize      bool
	Garbage       bool
	Foreign       bool
	After         bool
	Usage         bool
	UnknownUpdate bool
	// MalformedUpdate sends a known variant that fails to decode.
	MalformedUpdate bool
	// NullIDUpdate sends a session/update carrying "id": null.
	NullIDUpdate bool
	// ToolNameWrongType sends a tool call whose vendor name is a number.
	ToolNameWrongType bool
	Image             bool
	// ErrorCode, when non-zero, answers the prompt with this error.
	ErrorCode int
}

// wordTrim is stripped from both ends of a token, so words may sit in prose
// ("… slow and steady.").
const wordTrim = ".,;:!?()[]\"'"

// ParseWords reads words strictly: an unknown word is an error. It is used
// for --words, where a typo must not pass silently.
func ParseWords(s string) (Script, error) {
	var sc Script
	for _, tok := range strings.Fields(s) {
		ok, err := sc.apply(strings.Trim(tok, wordTrim))
		if err != nil {
			return sc, err
		}
		if !ok {
			return sc, fmt.Errorf("%w: %q", ErrWord, tok)
		}
	}
	return sc, nil
}

// ScriptFor builds the script of a turn: the --words flag's words, then the
// words found in the prompt text (other text is ignored). With no content
// word at all the turn streams the text script.
func ScriptFor(flagWords, prompt string) Script {
	sc, _ := ParseWords(flagWords) // validated when the flags were parsed
	for _, tok := range strings.Fields(prompt) {
		_, _ = sc.apply(strings.Trim(tok, wordTrim)) // prose is not an error
	}
	if !sc.Text && !sc.Thought && !sc.Plan && !sc.Tools && !sc.Image {
		sc.Text = true
	}
	return sc
}

// apply records one word; it reports false for a token that is not a word.
func (sc *Script) apply(w string) (bool, error) {
	if k, v, ok := strings.Cut(w, "="); ok {
		switch k {
		case "stop":
			if v == "" {
				return false, fmt.Errorf("%w: stop= needs a reason", ErrWord)
			}
			sc.StopReason = v
		case "exit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 255 {
				return false, fmt.Errorf("%w: exit= needs a status 0..255, not %q", ErrWord, v)
			}
			sc.Exit = &n
		case "permission":
			if v == "" {
				return false, fmt.Errorf("%w: permission= needs a tool kind", ErrWord)
			}
			sc.Permission, sc.PermissionKind = "refusable", v
		case "error":
			n, err := strconv.Atoi(v)
			if err != nil || n == 0 {
				return false, fmt.Errorf("%w: error= needs a non-zero code, not %q", ErrWord, v)
			}
			sc.ErrorCode = n
		default:
			return false, nil
		}
		return true, nil
	}
	switch w {
	case "text":
		sc.Text = true
	case "thought":
		sc.Thought = true
	case "plan":
		sc.Plan = true
	case "tools":
		sc.Tools = true
	case "full":
		sc.Text, sc.Thought, sc.Plan, sc.Tools = true, true, true, true
	case "permission":
		sc.Permission = "refusable"
	case "permission-allow-only":
		sc.Permission = "allow-only"
	case "write":
		sc.Write = true
	case "error-data":
		sc.ErrorData = true
	case "elicit":
		sc.Elicit = true
	case "call-unknown":
		sc.CallUnknown = true
	case "slow":
		sc.Slow = true
	case "slow-ignore-cancel":
		sc.Slow, sc.IgnoreCancel = true, true
	case "oversize":
		sc.Oversize = true
	case "garbage":
		sc.Garbage = true
	case "foreign":
		sc.Foreign = true
	case "after":
		sc.After = true
	case "usage":
		sc.Usage = true
	case "unknown-update":
		sc.UnknownUpdate = true
	case "malformed-update":
		sc.MalformedUpdate = true
	case "null-id-update":
		sc.NullIDUpdate = true
	case "tool-name-wrong-type":
		sc.ToolNameWrongType = true
	case "image":
		sc.Image = true
	default:
		return false, nil
	}
	return true, nil
}
