package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"acpkit.dev/adapter"
)

// permReq is a permission request for a tool of kind offering opts
// (option kinds, ids "o-<kind>").
func permReq(kind string, opts ...string) adapter.PermissionRequest {
	r := adapter.PermissionRequest{SessionID: "sess-1", ToolCallID: "t1", Title: "Write notes.txt", ToolKind: kind}
	for _, k := range opts {
		r.Options = append(r.Options, adapter.PermissionOption{ID: "o-" + k, Name: strings.ToUpper(k[:1]) + k[1:], Kind: k})
	}
	return r
}

func TestPM11_PolicyHooks(t *testing.T) {
	ctx := context.Background()
	all := []string{"reject_once", "allow_always", "allow_once"}
	r := &run{cfg: Config{Permissions: permRefuse}}
	assert.Nil(t, r.permissionHook(), "refuse is the adapter's own refusal: no hook at all")

	r.cfg.Permissions = permApproveAll
	hook := r.permissionHook()
	assert.Equal(t, adapter.PermissionDecision{OptionID: "o-allow_once", Reason: "--permissions approve-all"}, hook(ctx, permReq("execute", all...)), "the least-granting allow option")
	assert.Equal(t, "o-allow_always", hook(ctx, permReq("execute", "reject_once", "allow_always")).OptionID)
	assert.Equal(t, adapter.PermissionDecision{Reason: "the request offered no option that allows it"}, hook(ctx, permReq("edit", "reject_once")))

	r.cfg.Permissions = permApproveReads
	hook = r.permissionHook()
	for _, kind := range []string{"read", "search", "fetch", "think"} {
		assert.Equal(t, adapter.PermissionDecision{OptionID: "o-allow_once", Reason: "--permissions approve-reads"}, hook(ctx, permReq(kind, all...)), kind)
	}
	for _, kind := range []string{"edit", "delete", "move", "execute", "switch_mode", "other"} {
		d := hook(ctx, permReq(kind, all...))
		assert.Empty(t, d.OptionID, kind)
		assert.Equal(t, "--permissions approve-reads approves read, search, fetch and think only, not "+kind, d.Reason)
	}
}

// fakeTTY is a controlling terminal: what acprun writes is kept, and
// answer is what a person types.
type fakeTTY struct {
	mu     sync.Mutex
	out    bytes.Buffer
	in     *io.PipeReader
	answer *io.PipeWriter
	closed bool
	// asked closes once a question has been written.
	asked chan struct{}
	once  sync.Once
}

func newFakeTTY() *fakeTTY {
	r, w := io.Pipe()
	return &fakeTTY{in: r, answer: w, asked: make(chan struct{})}
}

func (f *fakeTTY) Read(p []byte) (int, error) { return f.in.Read(p) }
func (f *fakeTTY) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.out.Write(p)
	if strings.Contains(f.out.String(), "[y/N]") {
		f.once.Do(func() { close(f.asked) })
	}
	return n, err
}

func (f *fakeTTY) Close() error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	return f.in.Close()
}

func (f *fakeTTY) written() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.out.String()
}

// askRun is a run whose --permissions ask opens tty.
func askRun(tty *fakeTTY) (*run, *bytes.Buffer) {
	var out bytes.Buffer
	v := newTextView(&out, true, true, nil, func() time.Time { return epoch })
	return &run{cfg: Config{Permissions: permAsk}, view: v, env: Env{OpenTTY: func() (io.ReadWriteCloser, error) {
		if tty == nil {
			return nil, errors.New("no terminal")
		}
		return tty, nil
	}}}, &out
}

func TestPM11_AskPutsTheQuestionOnTheTerminal(t *testing.T) {
	for answer, want := range map[string]adapter.PermissionDecision{
		"y\n":   {OptionID: "o-allow_once", Reason: "approved at the terminal"},
		"YES\n": {OptionID: "o-allow_once", Reason: "approved at the terminal"},
		"n\n":   {Reason: "declined at the terminal"},
		"\n":    {Reason: "declined at the terminal"},
	} {
		tty := newFakeTTY()
		r, _ := askRun(tty)
		go func() { _, _ = tty.answer.Write([]byte(answer)) }()
		got := r.permissionHook()(context.Background(), permReq("edit", "allow_once", "allow_always", "reject_once"))
		assert.Equal(t, want, got, "%q", answer)
		assert.Equal(t, "acprun: the runtime asks permission for \"Write notes.txt\" (kind: edit)\n"+
			"  options: Allow_once (allow_once), Allow_always (allow_always), Reject_once (reject_once)\n"+
			"  allow with \"Allow_once\"? [y/N] ", tty.written())
		assert.True(t, tty.closed, "the terminal is closed after each question")
	}
}

func TestPM11_AskWithoutATerminalRefuses(t *testing.T) {
	r, _ := askRun(nil)
	assert.Equal(t, adapter.PermissionDecision{Reason: "--permissions ask found no terminal to ask at"},
		r.permissionHook()(context.Background(), permReq("edit", "allow_once", "reject_once")))
	r.env.OpenTTY = nil
	assert.Equal(t, "--permissions ask found no terminal to ask at", r.permissionHook()(context.Background(), permReq("edit", "allow_once")).Reason)
}

func TestPM11_AskIsWithdrawnWhenTheTurnEnds(t *testing.T) {
	tty := newFakeTTY()
	r, _ := askRun(tty)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan adapter.PermissionDecision)
	go func() { got <- r.permissionHook()(ctx, permReq("edit", "allow_once", "reject_once")) }()
	<-tty.asked // the question is out; nobody answers; the turn is cancelled
	cancel()
	assert.Equal(t, adapter.PermissionDecision{}, <-got)
}
