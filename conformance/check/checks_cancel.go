package check

import (
	"bytes"
	"context"
	"fmt"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
)

// PermissionPrompt asks for a turn that needs the user's permission (and
// its word "permission" is the reference agent's cue for a permission
// request).
const PermissionPrompt = "Delete the build cache directory, asking for permission first, then say done (permission)."

// cancelledOutcome is the answer a client MUST give pending permission
// requests once it sent session/cancel.
var cancelledOutcome = map[string]any{"outcome": map[string]any{"outcome": gen.RequestPermissionOutcomeCancelledTag}}

func checkCancelPermission(ctx context.Context, s *Session) error {
	sid, err := setupSession(ctx, s)
	if err != nil {
		return err
	}
	s.HoldPermissions()
	from := s.Mark()
	id, err := s.Send(gen.MethodSessionPrompt, PromptParams(sid, PermissionPrompt))
	if err != nil {
		return Failf("%v", err)
	}
	want := fmt.Sprint(id)
	first, err := s.WaitFor(ctx, from, func(m *Message) bool {
		if m.IsResponse() {
			return string(bytes.TrimSpace(m.ID)) == want
		}
		return m.IsRequest() && m.Method == gen.MethodSessionRequestPermission
	})
	if err != nil {
		return Failf("waiting for a permission request: %v", err)
	}
	if first.IsResponse() {
		if first.Error != nil && ModelUnavailable(first.Error.Code) {
			return NeedsModelf("session/prompt answered %v", first.Error)
		}
		return Skipf("the turn ended (%s) without asking for permission, so no permission request was pending to cancel", describe(first))
	}
	// With the permission request pending: cancel, then answer the request
	// cancelled as a client must, and the turn must end cancelled.
	if err := s.Notify(gen.MethodSessionCancel, map[string]any{"sessionId": sid}); err != nil {
		return Failf("%v", err)
	}
	if err := s.Reply(first, cancelledOutcome); err != nil {
		return Failf("%v", err)
	}
	m, err := s.Await(ctx, id)
	if err != nil {
		return Failf("session/prompt after session/cancel with a permission request pending: %v", err)
	}
	if m.Error != nil {
		return Failf("session/prompt cancelled with a permission request pending answered %v, want stopReason cancelled (agents MUST catch the cancellation's errors)", m.Error)
	}
	if stop := stopReason(m); stop != string(gen.StopReasonCancelled) {
		return Failf("session/prompt cancelled with a permission request pending ended with stopReason %q, want \"cancelled\"", stop)
	}
	return nil
}

// served runs a turn in a session whose model was seen working: any error
// is a failure (a -32603 no longer hints at a missing model).
func (s *Session) served(ctx context.Context, sid, what string) (*Turn, error) {
	turn, err := s.Prompt(ctx, sid, TurnPrompt)
	if o, ok := asOutcome(err); ok && o.status == StatusNeedsModel {
		return nil, Failf("%s: %s", what, o.reason)
	}
	if err != nil {
		return nil, reword(err, what+": ")
	}
	if turn.StopReason == string(gen.StopReasonCancelled) {
		return nil, Failf("%s ended with stopReason \"cancelled\", though nothing cancelled it", what)
	}
	return turn, nil
}

func checkCancelAfterTurn(ctx context.Context, s *Session) error {
	sid, err := setupSession(ctx, s)
	if err != nil {
		return err
	}
	if _, err := s.Prompt(ctx, sid, TurnPrompt); err != nil {
		return prereq(err)
	}
	if err := s.Notify(gen.MethodSessionCancel, map[string]any{"sessionId": sid}); err != nil {
		return Failf("%v", err)
	}
	// The cancel has been read once a later request is answered.
	if _, _, err := s.ping(ctx); err != nil {
		return Failf("after session/cancel with no turn running: %v", err)
	}
	_, err = s.served(ctx, sid, "the turn after a session/cancel sent when no turn was running")
	return err
}

func checkAfterCancel(ctx context.Context, s *Session) error {
	sid, _, err := cancelledTurn(ctx, s)
	if err != nil {
		return prereq(err) // prompt.cancel grades the cancelled turn itself
	}
	_, err = s.served(ctx, sid, "the prompt after a cancelled turn")
	return err
}

// stopReason reads a prompt result's stopReason ("" when absent).
func stopReason(m *Message) string {
	var r struct {
		StopReason string `json:"stopReason"`
	}
	_ = json.Unmarshal(m.Result, &r)
	return r.StopReason
}
