package check

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"acpkit.dev/acpsdk/gen"
)

// ToolPrompt asks for a turn that uses tools (and its word "tools" is the
// reference agent's cue for tool calls).
const ToolPrompt = "Read the file README.md, then list the files of the working directory with a shell command, and answer in one sentence (tools)."

// Tiny payloads for content blocks: a 1×1 PNG and a WAV file with no
// samples, both valid.
const (
	pngPixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
	wavEmpty = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="
)

// contentKind is one prompt content block a capability enables.
type contentKind struct {
	gate  string
	name  string
	block func(cwd string) map[string]any
}

var optionalContent = []contentKind{
	{GateImage, "an image", func(string) map[string]any {
		return map[string]any{"type": "image", "mimeType": "image/png", "data": pngPixel}
	}},
	{GateAudio, "an audio", func(string) map[string]any {
		return map[string]any{"type": "audio", "mimeType": "audio/wav", "data": wavEmpty}
	}},
	{GateEmbeddedContext, "an embedded resource", func(cwd string) map[string]any {
		return map[string]any{"type": "resource", "resource": map[string]any{
			"uri": fileURI(filepath.Join(cwd, "notes.txt")), "mimeType": "text/plain", "text": "A note for the agent.",
		}}
	}},
}

// fileURI makes a file URI of an absolute path.
func fileURI(path string) string { return "file://" + filepath.ToSlash(path) }

// promptWith runs one turn whose prompt is TurnPrompt followed by block.
func (s *Session) promptWith(ctx context.Context, sid string, block map[string]any) (*Turn, error) {
	from := s.Mark()
	id, err := s.Send(gen.MethodSessionPrompt, map[string]any{
		"sessionId": sid,
		"prompt":    []any{map[string]any{"type": gen.ContentBlockTextTag, "text": TurnPrompt}, block},
	})
	if err != nil {
		return nil, Failf("session/prompt: %v", err)
	}
	return s.finishTurn(ctx, from, id)
}

func checkResourceLink(ctx context.Context, s *Session) error {
	sid, err := setupSession(ctx, s)
	if err != nil {
		return err
	}
	link := map[string]any{"type": gen.ContentBlockResourceLinkTag, "uri": fileURI(filepath.Join(s.Cwd, "README.md")), "name": "README.md"}
	if _, err := s.promptWith(ctx, sid, link); err != nil {
		return reword(err, "a prompt with a resource_link block: ")
	}
	return nil
}

func checkAdvertisedContent(ctx context.Context, s *Session) error {
	h, sid, err := gatedSession(ctx, s, GateAnyContent)
	if err != nil {
		return err
	}
	for _, k := range optionalContent {
		if !h.Advertises(k.gate) {
			continue
		}
		if _, err := s.promptWith(ctx, sid, k.block(s.Cwd)); err != nil {
			return reword(err, fmt.Sprintf("a prompt with %s block (%s advertised): ", k.name, k.gate))
		}
	}
	return nil
}

func checkUnadvertisedContent(ctx context.Context, s *Session) error {
	h, err := s.Initialize(ctx)
	if err != nil {
		return prereq(err)
	}
	// Decided from the initialize answer before anything is sent, so a
	// shared process is left untouched and the skip not graded again.
	var untried []contentKind
	for _, k := range optionalContent {
		if !h.Advertises(k.gate) {
			untried = append(untried, k)
		}
	}
	if len(untried) == 0 {
		return Skipf("agent advertises every optional content kind (image, audio, embedded context)")
	}
	sid, err := s.NewSession(ctx)
	if err != nil {
		return prereq(err)
	}
	for _, k := range untried {
		m, err := s.Call(ctx, gen.MethodSessionPrompt, map[string]any{
			"sessionId": sid,
			"prompt":    []any{map[string]any{"type": gen.ContentBlockTextTag, "text": TurnPrompt}, k.block(s.Cwd)},
		})
		if err != nil {
			return Failf("a prompt with %s block: %v", k.name, err)
		}
		if m.Error == nil {
			return Failf("a prompt with %s block, though %s is not advertised, was served (%s); want -32602", k.name, k.gate, describe(m))
		}
		if m.Error.Code != CodeInvalidParams && ModelUnavailable(m.Error.Code) {
			return Skipf("a prompt with %s block answered %v, which may only say the model is unavailable: whether the agent refuses what it does not advertise could not be told", k.name, m.Error)
		}
		if m.Error.Code != CodeInvalidParams {
			return Failf("a prompt with %s block, though %s is not advertised, answered %v; want -32602", k.name, k.gate, m.Error)
		}
	}
	return nil
}

// clientMethodPrefixes are the agent→client methods a client offers only
// by capability.
var clientMethodPrefixes = []string{"fs/", "terminal/"}

func checkClientCapabilities(ctx context.Context, s *Session) error {
	sid, err := setupSession(ctx, s)
	if err != nil {
		return err
	}
	turn, err := s.Prompt(ctx, sid, ToolPrompt)
	if err != nil {
		return prereq(err)
	}
	msgs := between(s.Since(turn.From), turn.Response.Seq+1)
	// A tool shows in a tool_call update, or in a permission request for
	// it (Gemini CLI reports a refused call in nothing else).
	usedTool := false
	for _, m := range msgs {
		if !m.IsRequest() {
			continue
		}
		usedTool = usedTool || m.Method == gen.MethodSessionRequestPermission
		for _, p := range clientMethodPrefixes {
			if strings.HasPrefix(m.Method, p) {
				return Failf("the agent called %s, though acpcheck's clientCapabilities offer no fs and no terminal", m.Method)
			}
		}
	}
	for _, u := range Updates(msgs) {
		if u.SessionID == sid && (u.Kind == gen.SessionUpdateToolCallTag || u.Kind == gen.SessionUpdateToolCallUpdateTag) {
			usedTool = true
		}
	}
	if !usedTool {
		return Skipf("the turn used no tool (no tool_call update, no permission request), so nothing showed whether the agent keeps to the client's capabilities")
	}
	return nil
}

// reasonOf is the reason of a check outcome, or the error's text.
func reasonOf(err error) string {
	if o, ok := asOutcome(err); ok {
		return o.reason
	}
	return err.Error()
}

// reword prefixes a check outcome's reason, keeping its status.
func reword(err error, prefix string) error {
	if o, ok := asOutcome(err); ok {
		return &outcome{status: o.status, reason: prefix + o.reason, need: o.need}
	}
	return fmt.Errorf("%s%w", prefix, err)
}
