package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/segmentio/encoding/json"

	tfile "acpkit.dev/internal/transcript"
)

// ErrDiverged is the kind of the error for a live client that did not send
// what the recorded one did.
var ErrDiverged = errors.New("replay: the client diverged from the transcript")

// methodPrompt is the request whose content the replay checks.
const methodPrompt = "session/prompt"

// Replay plays the runtime's side of t to a live client: the lines the
// runtime wrote go to stdout (and stderr) in the recorded order, and where
// the recording has the client write, the replay reads the client's next
// line from stdin first. The live client's requests must come in the
// recorded order with the recorded methods, and each session/prompt with
// the recorded prompt text; each recorded response goes
// back under the id the live client used for the matching request (the
// line byte for byte when the ids agree). It returns the exit code the
// recorded runtime ended with: at once when it died with a request of the
// client unanswered (a crash), else after the client closed stdin. A client
// that diverges — another method, or more than the recording holds — ends
// the replay with exit code 1 and an ErrDiverged error.
func Replay(t *Transcript, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	in := bufio.NewReaderSize(stdin, 64<<10)
	ids := map[string]json.RawMessage{} // recorded request id → live id
	pending := map[string]bool{}        // recorded client requests unanswered
	for _, e := range t.Entries {
		switch e.Kind {
		case KindSend:
			want, err := e.Line()
			if err != nil {
				return 1, err
			}
			got, err := tfile.ReadLine(in)
			if errors.Is(err, io.EOF) {
				// The client stopped early (a teardown): nothing left to
				// answer.
				return 0, nil
			}
			if err != nil {
				return 1, fmt.Errorf("replay: reading the client: %w", err)
			}
			wm, wok := readMessage(want)
			gm, gok := readMessage(got)
			if !wok || !gok {
				if !bytes.Equal(want, got) {
					return 1, fmt.Errorf("%w: expected the line %q, got %q", ErrDiverged, want, got)
				}
				continue
			}
			if wm.Method != gm.Method {
				return 1, fmt.Errorf("%w: expected the client's next message to be %s, got %s", ErrDiverged, describe(wm), describe(gm))
			}
			if wm.Method == methodPrompt {
				// The answers were recorded for one prompt: played back to
				// another, they would pass for its answers.
				if w, g := promptText(wm.Params), promptText(gm.Params); w != g {
					return 1, fmt.Errorf("%w: the client sent the prompt %s where the recording has %s", ErrDiverged, quote(g, 200), quote(w, 200))
				}
			}
			if isRequest(wm) {
				ids[string(wm.ID)] = gm.ID
				pending[string(wm.ID)] = true
			}
		case KindRecv:
			line, err := e.Line()
			if err != nil {
				return 1, err
			}
			if m, ok := readMessage(line); ok && isResponse(m) {
				delete(pending, string(m.ID))
				if live, ok := ids[string(m.ID)]; ok && !bytes.Equal(live, m.ID) {
					if line, err = reID(line, live); err != nil {
						return 1, err
					}
				}
			}
			if _, err := stdout.Write(append(line, '\n')); err != nil {
				return 1, fmt.Errorf("replay: writing to the client: %w", err)
			}
		case KindStderr:
			line, err := e.Line()
			if err != nil {
				return 1, err
			}
			_, _ = stderr.Write(append(line, '\n'))
		case KindExit:
			code := 0
			if e.Code != nil && *e.Code >= 0 {
				code = *e.Code
			}
			if len(pending) > 0 {
				return code, nil // it died mid-request: so does the replay
			}
			return drain(in, code)
		}
	}
	return drain(in, 0)
}

// drain waits for the client to close stdin, as a runtime waits for its
// teardown, then returns code. Anything the client still sends is more
// than the recording holds.
func drain(in *bufio.Reader, code int) (int, error) {
	got, err := tfile.ReadLine(in)
	if errors.Is(err, io.EOF) {
		return code, nil
	}
	if err != nil {
		return 1, fmt.Errorf("replay: reading the client: %w", err)
	}
	m, _ := readMessage(got)
	return 1, fmt.Errorf("%w: the client sent %s after the recorded session ended", ErrDiverged, describe(m))
}

// describe names a message for a divergence report.
func describe(m message) string {
	switch {
	case isRequest(m):
		return "a " + m.Method + " request"
	case m.Method != "":
		return "a " + m.Method + " notification"
	default:
		return "a response"
	}
}

// reID rewrites a response's id. The members are kept; their order and
// spacing become the encoder's.
func reID(line []byte, id json.RawMessage) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, fmt.Errorf("replay: re-addressing a response: %w", err)
	}
	m["id"] = id
	return json.Marshal(m)
}
