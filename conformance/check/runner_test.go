package check_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/conformance/check"
)

// fakePeer is an Instance of a made-up role, to show that the framework
// grades any subject: here, nothing but a transcript and a name.
type fakePeer struct {
	lines       []check.Line
	interrupted chan struct{}
	closed      bool
}

func (p *fakePeer) Transcript() []check.Line { return p.lines }
func (p *fakePeer) Peer() check.Peer         { return check.Peer{Name: "fake-client", Version: "2.0"} }
func (p *fakePeer) Close()                   { p.closed = true }

func (p *fakePeer) Interrupt(note string) {
	p.lines = append(p.lines, check.Line{Dir: check.DirNote, Text: note})
	close(p.interrupted)
}

func (p *fakePeer) say(text string) {
	p.lines = append(p.lines, check.Line{Dir: check.DirRecv, Text: text})
}

const needLogin check.Need = "login"

// fakeRegistry is a client-like registry: a check that finds the peer
// logged out, checks that need the login or not, a gated capability check
// and one that only ends when its budget runs out.
func fakeRegistry() *check.Registry[*fakePeer] {
	r := check.NewRegistry[*fakePeer](check.RoleClient)
	r.Register(check.Check[*fakePeer]{ID: "hello", Tier: check.TierMandatory, Pins: "spec: says hello",
		Run: func(_ context.Context, p *fakePeer) error { p.say("hello"); return nil }})
	r.Register(check.Check[*fakePeer]{ID: "login", Tier: check.TierMandatory, Needs: []check.Need{needLogin},
		Run: func(_ context.Context, p *fakePeer) error {
			p.say("token sk-secret-123456 refused")
			return check.NeedsCredentialf(needLogin, "refused token sk-secret-123456")
		}})
	r.Register(check.Check[*fakePeer]{ID: "after-login", Tier: check.TierMandatory, Needs: []check.Need{needLogin},
		Run: func(context.Context, *fakePeer) error { return errors.New("must not run") }})
	r.Register(check.Check[*fakePeer]{ID: "gated", Tier: check.TierCapability, Gate: "fancy",
		Run: func(context.Context, *fakePeer) error { return errors.New("must not run") }})
	r.Register(check.Check[*fakePeer]{ID: "slow", Tier: check.TierAdvisory,
		Run: func(ctx context.Context, p *fakePeer) error {
			<-p.interrupted
			return check.Failf("interrupted: %v", ctx.Err())
		}})
	return r
}

// TestGradeWith_AnyRole: the runner launches one instance per check that
// runs, reports a need found unavailable once and the checks needing it
// without a launch, skips a gate known unadvertised without a launch,
// interrupts a check at its budget, masks secrets, and names the role.
func TestGradeWith_AnyRole(t *testing.T) {
	var launches atomic.Int32
	var peers []*fakePeer
	launch := func(context.Context) (*fakePeer, error) {
		launches.Add(1)
		p := &fakePeer{interrupted: make(chan struct{})}
		peers = append(peers, p)
		return p, nil
	}
	rep, err := check.GradeWith(context.Background(), fakeRegistry(), launch, check.Options{
		Budget:     50 * time.Millisecond,
		Secrets:    []string{"sk-secret-123456", "short"},
		Advertised: func(gate string) (bool, bool) { return false, gate == "fancy" },
	})
	require.NoError(t, err)
	assert.EqualValues(t, 3, launches.Load(), "hello, login and slow launch; after-login and gated do not")
	for _, p := range peers {
		assert.True(t, p.closed, "every instance is closed")
	}
	byID := map[string]check.Result{}
	for _, r := range rep.Results {
		byID[r.ID] = r
	}
	assert.Equal(t, check.StatusPass, byID["hello"].Status)
	assert.Equal(t, "spec: says hello", byID["hello"].Pins)
	login := byID["login"]
	assert.Equal(t, check.StatusNeedsCredential, login.Status)
	assert.Equal(t, "refused token ***", login.Reason, "the secret is masked in the reason")
	require.NotEmpty(t, login.Transcript)
	assert.Equal(t, "token *** refused", login.Transcript[0].Text, "and in the transcript")
	after := byID["after-login"]
	assert.True(t, after.NotLaunched)
	assert.Equal(t, check.StatusNeedsCredential, after.Status)
	assert.Equal(t, "not launched: needs a credential, as login found", after.Reason)
	gated := byID["gated"]
	assert.True(t, gated.NotLaunched)
	assert.Equal(t, check.StatusSkip, gated.Status)
	assert.Equal(t, "client does not advertise fancy (as it answered an earlier check; not launched)", gated.Reason)
	slow := byID["slow"]
	assert.Equal(t, check.StatusFail, slow.Status)
	assert.Contains(t, slow.Reason, "deadline exceeded")
	assert.Contains(t, slow.Transcript[0].Text, "check stopped")

	assert.Equal(t, check.RoleClient, rep.Role)
	assert.Equal(t, check.Peer{Name: "fake-client", Version: "2.0"}, rep.Peer)
	assert.Equal(t, check.VerdictIncomplete, rep.Verdict)
	assert.Equal(t, check.Coverage{Total: 3, Graded: 1, NotGraded: []check.NotGraded{
		{ID: "login", Status: check.StatusNeedsCredential, Reason: "refused token ***"},
		{ID: "after-login", Status: check.StatusNeedsCredential, Reason: "not launched: needs a credential, as login found"},
	}}, rep.Mandatory)
	var b bytes.Buffer
	require.NoError(t, check.WriteTable(&b, rep))
	assert.True(t, strings.HasPrefix(b.String(), "client: fake-client 2.0\n"), b.String())
	assert.NotContains(t, b.String(), "sk-secret")
}

func TestGradeWith_OnlySelectsAndTheSummarySaysSo(t *testing.T) {
	launch := func(context.Context) (*fakePeer, error) { return &fakePeer{interrupted: make(chan struct{})}, nil }
	rep, err := check.GradeWith(context.Background(), fakeRegistry(), launch, check.Options{Only: []string{"hello"}})
	require.NoError(t, err)
	require.Len(t, rep.Results, 1)
	assert.Equal(t, 5, rep.Registered)
	assert.Equal(t, check.VerdictOK, rep.Verdict, "the verdict covers the checks chosen")
	assert.True(t, strings.HasPrefix(check.SummaryLine(rep), "1 of 5 checks (--only): 1 pass"), check.SummaryLine(rep))
}

func TestGradeWith_LaunchFailureEndsTheGrading(t *testing.T) {
	boom := errors.New("no such program")
	launch := func(context.Context) (*fakePeer, error) { return nil, boom }
	_, err := check.GradeWith(context.Background(), fakeRegistry(), launch, check.Options{})
	require.ErrorIs(t, err, boom)
}

func TestRegistry_RefusesMalformedChecks(t *testing.T) {
	run := func(context.Context, *fakePeer) error { return nil }
	for name, c := range map[string]check.Check[*fakePeer]{
		"no ID":              {Tier: check.TierMandatory, Run: run},
		"no Run":             {ID: "x", Tier: check.TierMandatory},
		"unknown tier":       {ID: "x", Tier: "optional", Run: run},
		"ungated capability": {ID: "x", Tier: check.TierCapability, Run: run},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Panics(t, func() { check.NewRegistry[*fakePeer](check.RoleClient).Register(c) })
		})
	}
	r := check.NewRegistry[*fakePeer](check.RoleClient)
	r.Register(check.Check[*fakePeer]{ID: "x", Tier: check.TierAdvisory, Run: run})
	assert.Panics(t, func() { r.Register(check.Check[*fakePeer]{ID: "x", Tier: check.TierAdvisory, Run: run}) }, "duplicate ID")
}

// TestStandard_ChecksAreWellFormed: every agent check says what it pins,
// and what it needs, and a capability check's gate is one the handshake
// knows.
func TestStandard_ChecksAreWellFormed(t *testing.T) {
	for _, c := range check.Standard().Checks() {
		assert.NotEmpty(t, c.Pins, "%s pins no requirement", c.ID)
		// Needs nest: a session needs the handshake, a turn a session.
		nested := []check.Need{check.NeedHandshake, check.NeedSession, check.NeedModel}
		assert.True(t, len(c.Needs) > 0 && slices.Equal(c.Needs, nested[:len(c.Needs)]), "%s needs %v", c.ID, c.Needs)
		if c.Tier == check.TierCapability {
			assert.NotEmpty(t, c.Gate, c.ID)
		}

		assert.Equal(t, c.Title, strings.TrimSpace(c.Title), c.ID)
	}
}
