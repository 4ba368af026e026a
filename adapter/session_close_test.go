package adapter

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func (h *harness) verification(args ...string) StartParams {
	p := h.params(args...)
	p.CredentialVerification = true
	return p
}

func TestCL1_CloseOnlyWhenAdvertised(t *testing.T) {
	h := newHarness(t)
	s := h.start("close")
	h.stop(s)
	assert.Equal(t, "session/close", h.methods()[len(h.methods())-1])
	assert.Len(t, h.log.find("session closed through the protocol"), 1)

	h2 := newHarness(t)
	s2 := h2.start("resume") // sessionCapabilities without close
	h2.stop(s2)
	assert.NotContains(t, h2.methods(), "session/close")
	h3 := newHarness(t)
	s3 := h3.start() // no sessionCapabilities at all
	h3.stop(s3)
	assert.NotContains(t, h3.methods(), "session/close")
	assert.NotContains(t, h3.methods(), "session/delete")
}

func TestCL1_OrdinarySessionNeverDeletes(t *testing.T) {
	h := newHarness(t)
	s := h.start("close", "delete")
	h.stop(s)
	assert.Contains(t, h.methods(), "session/close")
	assert.NotContains(t, h.methods(), "session/delete")
}

func TestCL2_AU3_LOG19_VerificationDeletesWhenAdvertised(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.verification("close", "delete"))
	h.stop(s)
	assert.Equal(t, "session/delete", h.methods()[len(h.methods())-1])
	assert.NotContains(t, h.methods(), "session/close")
	recs := h.log.find("session deleted through the protocol")
	require.Len(t, recs, 1)
	assert.Equal(t, slog.LevelDebug, recs[0].Level)
}

func TestCL2_VerificationFallsBackToClose(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.verification("close"))
	h.stop(s)
	assert.Contains(t, h.methods(), "session/close")
	h2 := newHarness(t)
	s2 := h2.startWith(h2.verification())
	h2.stop(s2)
	assert.NotContains(t, h2.methods(), "session/close")
	assert.NotContains(t, h2.methods(), "session/delete")
}

func TestCL3_AU3_VerificationCarriesNoServersAndNeverContinues(t *testing.T) {
	h := newHarness(t)
	cfg := filepath.Join(h.dir, "mcp.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"mcpServers":{"sortie-tools":{"command":"/bin/true"}}}`), 0o600))
	p := h.verification("load", "resume", "loadreplay")
	p.MCPConfigPath = cfg
	p.ResumeSessionID = "old-1"
	s := h.startWith(p)
	assert.Equal(t, "sess-1", s.ID)
	assert.Equal(t, []string{"initialize", "session/new"}, h.methods())
	assert.JSONEq(t, `{"cwd":"`+h.dir+`","mcpServers":[]}`, params(t, h.line("session/new")))
}

func TestCL4_CloseParams(t *testing.T) {
	h := newHarness(t)
	s := h.start("close", "sid=abc")
	h.stop(s)
	assert.JSONEq(t, `{"sessionId":"abc"}`, params(t, h.line("session/close")))
}

func TestCL5_LOG16_CloseErrorLogsCodeOnly(t *testing.T) {
	h := newHarness(t)
	s := h.start("close", "closeerr=-32603")
	h.stop(s)
	recs := h.log.find("session/close returned an error")
	require.Len(t, recs, 1)
	assert.Equal(t, slog.LevelWarn, recs[0].Level)
	assert.Equal(t, "-32603", recs[0].Attrs["code"])
	for k, v := range recs[0].Attrs {
		assert.NotContains(t, v, "secret detail", k)
	}
}

func TestCL5_LOG15_TD2_CloseBoundedByHalfTheWindow(t *testing.T) {
	h := newHarness(t)
	p := h.params("close", "hang-close")
	p.Agent.StopGraceMS = 400
	s := h.startWith(p)
	h.stop(s)
	recs := h.log.find("session/close did not complete before the wait ended")
	require.Len(t, recs, 1)
	assert.Equal(t, "bound elapsed", recs[0].Attrs["outcome"])
	bound, err := time.ParseDuration(recs[0].Attrs["bound"])
	require.NoError(t, err)
	assert.LessOrEqual(t, bound, 200*time.Millisecond)
	assert.Greater(t, bound, 100*time.Millisecond)
}

func TestCL5_LOG15_CallerDeadlineOutcome(t *testing.T) {
	h := newHarness(t)
	s := h.start("close", "hang-close")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	require.NoError(t, h.a.StopSession(ctx, s))
	recs := h.log.find("session/close did not complete before the wait ended")
	require.Len(t, recs, 1)
	// The caller's deadline shortened the window, but the close's own half
	// bound ended first while the caller's context was still live.
	assert.Contains(t, []string{"bound elapsed", "caller deadline"}, recs[0].Attrs["outcome"])
}

func TestCL5_LOG17_CloseCallIncomplete(t *testing.T) {
	// The runtime dies before answering: the call fails as a lost
	// connection, which is Debug only.
	h := newHarness(t)
	s := h.start("close")
	_, err, _ := h.turn(s, "crash")
	require.Error(t, err)
	h.stop(s)
	assert.Len(t, h.log.find("session/close call did not complete"), 1)
	assert.Empty(t, h.log.find("session/close did not complete before the wait ended"))
}

func TestCL6_LOG18_DeleteFailuresWarn(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.verification("delete", "closeerr=-32603"))
	h.stop(s)
	recs := h.log.find("failed to delete credential verification session")
	require.Len(t, recs, 1)
	assert.Equal(t, slog.LevelWarn, recs[0].Level)
	assert.Equal(t, "-32603", recs[0].Attrs["code"])

	h2 := newHarness(t)
	p := h2.verification("delete", "hang-close")
	p.Agent.StopGraceMS = 300
	s2 := h2.startWith(p)
	h2.stop(s2)
	recs = h2.log.find("failed to delete credential verification session")
	require.Len(t, recs, 1)
	assert.Equal(t, "bound elapsed", recs[0].Attrs["outcome"])
	assert.NotEmpty(t, recs[0].Attrs["bound"])

	h3 := newHarness(t)
	s3 := h3.startWith(h3.verification("delete"))
	_, err, _ := h3.turn(s3, "crash")
	require.Error(t, err)
	h3.stop(s3)
	recs = h3.log.find("failed to delete credential verification session")
	require.Len(t, recs, 1)
	assert.NotEmpty(t, recs[0].Attrs["error"])
}

func TestAU1_NoCredentialHandling(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	assert.Equal(t, []string{"initialize", "session/new"}, h.methods(), "no authenticate, no canary")
	h.stop(s)
}

func TestAU2_VerificationFailures(t *testing.T) {
	h := newHarness(t)
	_, err := h.a.StartSession(context.Background(), h.verification("initerr=-32000"))
	assert.Equal(t, KindCredentialUnverified, KindOf(err))
	_, err = h.a.StartSession(context.Background(), h.verification("newerr=-32000"))
	assert.Equal(t, KindCredentialUnverified, KindOf(err))
	_, err = h.a.StartSession(context.Background(), h.verification("exit-before-init"))
	assert.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "the agent runtime exited before responding: exit status 7"})
	// A runtime that accepts the credential runs the verification turn.
	s := h.startWith(h.verification())
	_, err, _ = h.turn(s, "stop:end_turn")
	assert.NoError(t, err)
	h.stop(s)
}

func TestCL7_RuntimeAdvertisingNeitherEndsByTermination(t *testing.T) {
	// Gemini CLI and Kiro CLI advertise neither method: their sessions,
	// verification ones included, end by process termination only.
	h := newHarness(t)
	s := h.startWith(h.verification("load"))
	h.stop(s)
	assert.NotContains(t, h.methods(), "session/close")
	assert.NotContains(t, h.methods(), "session/delete")
	assert.Len(t, h.log.find("agent exited during the graceful phase"), 1)
}
