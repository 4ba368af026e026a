package adapter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk"
)

// hookRecorder is a PermissionHook that answers with decide and keeps what
// it was asked.
type hookRecorder struct {
	mu     sync.Mutex
	asked  []PermissionRequest
	decide func(ctx context.Context, r PermissionRequest) PermissionDecision
}

func (h *hookRecorder) hook(ctx context.Context, r PermissionRequest) PermissionDecision {
	h.mu.Lock()
	h.asked = append(h.asked, r)
	h.mu.Unlock()
	return h.decide(ctx, r)
}

func (h *hookRecorder) requests() []PermissionRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]PermissionRequest(nil), h.asked...)
}

// allowFirst selects the request's first allow option.
func allowFirst(_ context.Context, r PermissionRequest) PermissionDecision {
	for _, o := range r.Options {
		if o.Allows() {
			return PermissionDecision{OptionID: o.ID, Reason: "the test allows it"}
		}
	}
	return PermissionDecision{}
}

func TestPM11_HookApprovesWithAnEvent(t *testing.T) {
	rec := &hookRecorder{decide: allowFirst}
	h := newHarness(t, WithPermissionHook(rec.hook))
	s := h.start()
	r, err, ev := h.turn(s, "permtool:edit:reject_once+allow_once+allow_always stop:end_turn")
	require.NoError(t, err)
	assert.Equal(t, EventTurnCompleted, r.Outcome)
	assert.Contains(t, ev.texts(), `answer={"outcome":{"outcome":"selected","optionId":"opt-1-allow_once"}}`)
	assert.Contains(t, ev.texts(), `approved a permission request: selected "allow_once" (allow_once) for edit "Run the edit tool": the test allows it`)
	assert.NotContains(t, ev.texts(), "refused a permission request because this run is unattended and no one can approve it")
	assert.Zero(t, r.PermissionsRefused, "an approval is no refusal (DI-11)")

	asked := rec.requests()
	require.Len(t, asked, 1)
	assert.Equal(t, PermissionRequest{
		SessionID: s.ID, ToolCallID: "t-edit", Title: "Run the edit tool", ToolKind: "edit",
		Options: []PermissionOption{
			{ID: "opt-0-reject_once", Name: "reject_once", Kind: "reject_once"},
			{ID: "opt-1-allow_once", Name: "allow_once", Kind: "allow_once"},
			{ID: "opt-2-allow_always", Name: "allow_always", Kind: "allow_always"},
		},
	}, asked[0])
}

func TestPM11_HookRefusalIsPM1WithItsReason(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dec    PermissionDecision
		answer string
		notice string
	}{
		{"no option", PermissionDecision{Reason: "declined at the terminal"}, "opt-2-reject_once", "refused a permission request: declined at the terminal"},
		{"an option not offered", PermissionDecision{OptionID: "made-up"}, "opt-2-reject_once", "refused a permission request because this run is unattended and no one can approve it"},
		{"its own reject option", PermissionDecision{OptionID: "opt-1-reject_always", Reason: "no"}, "opt-1-reject_always", "refused a permission request: no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, WithPermissionHook(func(context.Context, PermissionRequest) PermissionDecision { return tc.dec }))
			s := h.start()
			r, err, ev := h.turn(s, "permtool:delete:allow_once+reject_always+reject_once stop:end_turn")
			require.NoError(t, err)
			assert.Contains(t, ev.texts(), `answer={"outcome":{"outcome":"selected","optionId":"`+tc.answer+`"}}`)
			assert.Contains(t, ev.texts(), tc.notice)
			assert.Equal(t, 1, r.PermissionsRefused)
		})
	}
}

func TestPM11_HookRefusalWithoutARejectOptionIsPM2(t *testing.T) {
	h := newHarness(t, WithPermissionHook(func(context.Context, PermissionRequest) PermissionDecision { return PermissionDecision{} }))
	s := h.start()
	r, err, ev := h.turn(s, "permtool:execute:allow_once stop:end_turn")
	assert.Equal(t, KindTurnInputRequired, KindOf(err))
	assert.Equal(t, EventTurnInputRequired, r.Outcome)
	assert.Contains(t, ev.texts(), `answer={"outcome":{"outcome":"cancelled"}}`)
	assert.Contains(t, ev.texts(), "the agent needs a permission this unattended run cannot grant")
	assert.Equal(t, 1, r.PermissionsRefused)
}

// TestPM11_ZeroValueIsTodaysRefusal: without a hook (and with a nil one)
// every request is refused exactly as PM-1 and PM-2 say.
func TestPM11_ZeroValueIsTodaysRefusal(t *testing.T) {
	for _, opts := range [][]Option{nil, {WithPermissionHook(nil)}} {
		h := newHarness(t, opts...)
		s := h.start()
		_, err, ev := h.turn(s, "permtool:read:allow_once+reject_once stop:end_turn")
		require.NoError(t, err)
		assert.Contains(t, ev.texts(), `answer={"outcome":{"outcome":"selected","optionId":"opt-1-reject_once"}}`)
		assert.Contains(t, ev.texts(), "refused a permission request because this run is unattended and no one can approve it")
	}
}

// TestPM11_TU7_CancelWhileTheHookDecides: a person who has not answered
// yet when the turn is cancelled gets no say: the hook's context ends and
// the request is answered cancelled (TU-8). Repeated, under -race, for the
// decision racing the cancellation.
func TestPM11_TU7_CancelWhileTheHookDecides(t *testing.T) {
	for i := range 20 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			asked := make(chan struct{})
			var once sync.Once
			h := newHarness(t, WithPermissionHook(func(ctx context.Context, r PermissionRequest) PermissionDecision {
				once.Do(func() { close(asked) })
				<-ctx.Done()
				return allowFirst(ctx, r) // too late: answered cancelled
			}))
			s := h.start()
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-asked; cancel() }()
			// The answer comes only after the cancel (the hook returns on
			// it); the runtime then stops with cancelled.
			r, err, ev := h.turnCtx(ctx, s, "permtool:edit:allow_once+reject_once stop:cancelled")
			assert.Equal(t, KindTurnCancelled, KindOf(err))
			assert.Equal(t, EventTurnCancelled, r.Outcome)
			for _, m := range ev.texts() {
				assert.False(t, strings.HasPrefix(m, "approved"), "no approval after the cancel: %q", m)
			}
			// The next turn shows the request was answered cancelled.
			_, err, _ = h.turn(s, "stop:end_turn")
			require.NoError(t, err)
			assert.Contains(t, strings.Join(h.wire(), "\n"), `"result":{"outcome":{"outcome":"cancelled"}}`)
		})
	}
}

// TestPM11_TD1_StopWhileTheHookDecides: StopSession does not wait for a
// hook that waits for a person: the request gets its teardown answer and
// the hook's context ends.
func TestPM11_TD1_StopWhileTheHookDecides(t *testing.T) {
	asked, returned := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var sent []string
	tap := WithWireTap(func(e WireEvent) {
		if e.Kind == WireSend {
			mu.Lock()
			sent = append(sent, string(e.Line))
			mu.Unlock()
		}
	})
	h := newHarness(t, tap, WithPermissionHook(func(ctx context.Context, _ PermissionRequest) PermissionDecision {
		close(asked)
		<-ctx.Done()
		close(returned)
		return PermissionDecision{}
	}))
	s, err := h.a.StartSession(context.Background(), h.params())
	require.NoError(t, err)
	turn := make(chan error, 1)
	go func() {
		_, err := h.a.RunTurn(context.Background(), s, TurnParams{Prompt: "permtool:edit:allow_once+reject_once stop:end_turn"})
		turn <- err
	}()
	<-asked
	require.NoError(t, h.a.StopSession(context.Background(), s))
	<-returned
	// The runtime may still answer its prompt before it is stopped.
	if err := <-turn; err != nil {
		assert.Equal(t, KindPortExit, KindOf(err))
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, strings.Join(sent, "\n"), `"result":{"outcome":{"outcome":"cancelled"}}`, "the teardown answer was written")
}

// TestPM11_PM7_BetweenTurnsTheHookDecidesToo: a request that arrives
// before any turn is decided by the hook, and its approval is reported in
// the next turn.
func TestPM11_PM7_BetweenTurnsTheHookDecidesToo(t *testing.T) {
	rec := &hookRecorder{decide: allowFirst}
	h := newHarness(t, WithPermissionHook(rec.hook))
	s := h.start("beforenew=permtool:fetch:allow_once")
	r, err, ev := h.turn(s, "stop:end_turn")
	require.NoError(t, err, "an approval latches nothing")
	assert.Equal(t, EventTurnCompleted, r.Outcome)
	assert.Contains(t, ev.lastText("approved a permission request: "), `for fetch "Run the fetch tool"`)
	require.Len(t, rec.requests(), 1)
}

func TestDI11_RefusalsCountedAndWhetherAnythingFollowed(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	// Copilot, OpenCode and Qwen Code: end_turn right after the refusal.
	r, err, _ := h.turn(s, "chunk:m:working permquiet:reject_once stop:end_turn")
	require.NoError(t, err, "the outcome is still DI-2's")
	assert.Equal(t, EventTurnCompleted, r.Outcome)
	assert.Equal(t, 1, r.PermissionsRefused)
	assert.False(t, r.UpdatedAfterRefusal, "nothing ran after the refusal")

	// claude and Cline carry on after it.
	r, err, _ = h.turn(s, "permquiet:reject_once permquiet:reject_always chunk:m2:carrying-on stop:end_turn")
	require.NoError(t, err)
	assert.Equal(t, 2, r.PermissionsRefused, "counted per turn")
	assert.True(t, r.UpdatedAfterRefusal)

	// An update before a later refusal does not count for it.
	r, _, _ = h.turn(s, "permquiet:reject_once chunk:m3:x permquiet:reject_once stop:end_turn")
	assert.Equal(t, 2, r.PermissionsRefused)
	assert.False(t, r.UpdatedAfterRefusal)

	r, err, _ = h.turn(s, "chunk:m4:no-permission stop:end_turn")
	require.NoError(t, err)
	assert.Zero(t, r.PermissionsRefused)
	assert.False(t, r.UpdatedAfterRefusal)
}

func TestDI11_PM2RefusalCounts(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	r, err, _ := h.turn(s, "permquiet:allow_once stop:end_turn")
	assert.Equal(t, KindTurnInputRequired, KindOf(err))
	assert.Equal(t, 1, r.PermissionsRefused)
}

func TestDI11_DI3_PromptErrorDataReachesTheCause(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	r, err, _ := h.turn(s, "errdata:-32000")
	require.Error(t, err)
	assert.Equal(t, "session/prompt error -32000: prompt went wrong", r.Message, "DI-3's message unchanged")
	var ae *Error
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "session/prompt error -32000: prompt went wrong", ae.Message)
	require.Error(t, ae.Err)
	assert.Contains(t, ae.Err.Error(), `{"details":"401 Incorrect API key provided"}`)
	var wire *acpsdk.Error
	require.ErrorAs(t, err, &wire, "the wire error is still in the chain")
	assert.JSONEq(t, `{"details":"401 Incorrect API key provided"}`, string(wire.Data))

	// Without data the cause is the wire error alone.
	_, err, _ = h.turn(s, "err:-32603")
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "jsonrpc error -32603: prompt went wrong", ae.Err.Error())
}

func TestAU5_AuthenticatesBeforeSessionNew(t *testing.T) {
	h := newHarness(t)
	p := h.params("auth=term-login+api-key+oauth", "authneeded")
	p.AuthMethodID = "api-key"
	s := h.startWith(p)
	require.NotEmpty(t, s.ID)
	w := h.wire()
	auth, sessNew := -1, -1
	for i, l := range w {
		switch {
		case strings.Contains(l, `"method":"authenticate"`):
			auth = i
		case strings.Contains(l, `"method":"session/new"`):
			sessNew = i
		}
	}
	require.GreaterOrEqual(t, auth, 0, "authenticate was called")
	assert.Less(t, auth, sessNew, "before session/new")
	assert.JSONEq(t, `{"methodId":"api-key"}`, params(t, w[auth]))
}

func TestAU5_AU1_NeverWithoutBeingAsked(t *testing.T) {
	h := newHarness(t)
	err := h.startErr("auth=api-key", "authneeded")
	assert.Equal(t, KindCredentialUnverified, KindOf(err), "the runtime's own refusal (HS-3)")
	assert.Zero(t, count(h.wire(), `"method":"authenticate"`))
}

func TestAU5_UnadvertisedMethodFailsBeforeSessionNew(t *testing.T) {
	for _, tc := range []struct {
		auth       string
		advertised []string
		msg        string
	}{
		{"term-login+api-key+oauth", []string{"api-key", "oauth"}, `the agent runtime does not advertise the auth method "nope"; it advertises api-key, oauth`},
		{"", nil, `the agent runtime advertises no auth method, so it cannot authenticate with "nope"`},
	} {
		h := newHarness(t)
		args := []string{"authneeded"}
		if tc.auth != "" {
			args = append(args, "auth="+tc.auth)
		}
		p := h.params(args...)
		p.AuthMethodID = "nope"
		_, err := h.a.StartSession(context.Background(), p)
		require.Error(t, err)
		assert.Equal(t, KindCredentialUnverified, KindOf(err))
		var ame *AuthMethodError
		require.ErrorAs(t, err, &ame)
		assert.Equal(t, "nope", ame.Requested)
		assert.Equal(t, tc.advertised, ame.Advertised, "a terminal method is not one to authenticate with")
		assert.Equal(t, tc.msg, err.(*Error).Message)
		assert.Zero(t, count(h.wire(), `"method":"session/new"`))
		assert.Zero(t, count(h.wire(), `"method":"authenticate"`))
	}
}

func TestAU5_RefusedAuthenticationIsCredentialUnverified(t *testing.T) {
	h := newHarness(t)
	p := h.params("auth=api-key", "autherr=-32000")
	p.AuthMethodID = "api-key"
	_, err := h.a.StartSession(context.Background(), p)
	require.Error(t, err)
	assert.Equal(t, KindCredentialUnverified, KindOf(err))
	assert.Equal(t, `the agent runtime refused to authenticate with "api-key": invalid API key: {"details":"401 from the backend"}`, err.(*Error).Message)
	assert.True(t, errors.Is(err, acpsdk.ErrAuthRequired), "the wire error is the cause")
	assert.Zero(t, count(h.wire(), `"method":"session/new"`))
}
