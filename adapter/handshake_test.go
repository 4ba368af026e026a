package adapter

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/internal/stderrlog"
)

// startErr starts a session that must fail and returns the error.
func (h *harness) startErr(args ...string) error {
	h.t.Helper()
	s, err := h.a.StartSession(context.Background(), h.params(args...))
	require.Error(h.t, err)
	assert.Nil(h.t, s.s)
	return err
}

func TestHS1_InitializeParamsAndFirstID(t *testing.T) {
	h := newHarness(t)
	h.start()
	w := h.wire()
	require.NotEmpty(t, w)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}}`, w[0])
}

func TestHS2_InitializeBoundIsMaxOfReadTimeoutAndFloor(t *testing.T) {
	assert.Equal(t, 60*time.Second, handshakeFloor, "the production floor")
	h := newHarness(t, withHandshakeFloor(50*time.Millisecond))
	h.readTimeoutMS = 300
	begin := time.Now()
	err := h.startErr("init-hang")
	assert.GreaterOrEqual(t, time.Since(begin), 300*time.Millisecond, "the read timeout is larger than the floor here")
	assert.Equal(t, KindResponseTimeout, KindOf(err))
	var e *Error
	require.True(t, errors.As(err, &e))
	assert.Equal(t, "timed out waiting for a response", e.Message)
}

func TestHS3_Minus32000IsCredentialUnverified(t *testing.T) {
	h := newHarness(t)
	err := h.startErr("initerr=-32000", "initerrdata=log+in+first")
	var e *Error
	require.True(t, errors.As(err, &e))
	assert.Equal(t, KindCredentialUnverified, e.Kind)
	assert.Equal(t, "the agent runtime refused its credential: Authentication required: log+in+first", e.Message)
}

func TestHS3_OtherCodeIsResponseError(t *testing.T) {
	h := newHarness(t)
	err := h.startErr("initerr=-32603")
	var e *Error
	require.True(t, errors.As(err, &e))
	assert.Equal(t, KindResponseError, e.Kind)
	assert.Equal(t, "initialize error -32603: Authentication required", e.Message)
}

func TestHS4_UndecodableInitializeResult(t *testing.T) {
	h := newHarness(t)
	err := h.startErr("initbad")
	assert.ErrorIs(t, err, &Error{Kind: KindResponseError, Message: "initialize response did not decode"})
}

func TestHS5_WrongProtocolVersionEndsSession(t *testing.T) {
	h := newHarness(t)
	err := h.startErr("version=2")
	assert.ErrorIs(t, err, &Error{Kind: KindResponseError, Message: "agent reported protocol version 2, want 1"})
	// Nothing after the handshake was attempted.
	for _, l := range h.wire() {
		assert.NotContains(t, l, "session/new")
	}
}

func TestHS7_HandshakeFactsKept(t *testing.T) {
	cases := []struct {
		raw  string
		want handshakeFacts
		ok   bool
	}{
		{`{"protocolVersion":1}`, handshakeFacts{protocolVersion: 1}, true},
		{`{"protocolVersion":1,"agentInfo":{"name":"x","version":"2"},"agentCapabilities":{"loadSession":true,"mcpCapabilities":{"http":true,"sse":true},"sessionCapabilities":{"resume":{},"close":{},"delete":{}}}}`,
			handshakeFacts{protocolVersion: 1, hasAgentInfo: true, agentName: "x", agentVersion: "2", loadSession: true, mcpHTTP: true, resume: true, close: true, delete: true}, true},
		// Capabilities are exact: "true"-ish values and null members do not count.
		{`{"protocolVersion":1,"agentCapabilities":{"loadSession":"yes","mcpCapabilities":{"http":1},"sessionCapabilities":{"resume":null,"close":{}}}}`,
			handshakeFacts{protocolVersion: 1, close: true}, true},
		{`{"protocolVersion":1,"agentCapabilities":{"sessionCapabilities":null}}`, handshakeFacts{protocolVersion: 1}, true},
		{`{"protocolVersion":1,"agentInfo":null}`, handshakeFacts{protocolVersion: 1}, true},
		{`{"protocolVersion":1,"unknown":{"a":1},"agentCapabilities":{"extra":true}}`, handshakeFacts{protocolVersion: 1}, true},
		{`{}`, handshakeFacts{}, false},
		{`{"protocolVersion":"1"}`, handshakeFacts{}, false},
		{`[]`, handshakeFacts{}, false},
	}
	for _, c := range cases {
		f, ok := decodeInitialize([]byte(c.raw))
		assert.Equal(t, c.ok, ok, c.raw)
		assert.Equal(t, c.want, f, c.raw)
	}
}

func FuzzDecodeInitialize(f *testing.F) {
	f.Add([]byte(`{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}`))
	f.Add([]byte(`{"protocolVersion":1,"agentInfo":{"name":1}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fa, ok := decodeInitialize(b)
		if !ok && !reflect.DeepEqual(fa, handshakeFacts{}) {
			t.Fatal("facts from a failed decode")
		}
	})
}

func TestSS3_EarlyExitReport(t *testing.T) {
	h := newHarness(t)
	err := h.startErr("exit-before-init")
	var e *Error
	require.True(t, errors.As(err, &e))
	assert.Equal(t, KindPortExit, e.Kind)
	assert.Equal(t, "the agent runtime exited before responding: exit status 7", e.Message)
	var tail *stderrlog.TailError
	require.True(t, errors.As(err, &tail))
	assert.Equal(t, "boom: no credentials | second line", tail.Tail)
}

func TestSS2_LOG21_FailedStartTearsDownThenRelogsStderr(t *testing.T) {
	h := newHarness(t)
	h.startErr("exit-before-init")
	recs := h.log.all()
	exitIdx, firstStderr := -1, -1
	var lines []string
	for i, r := range recs {
		if r.Message == "agent exited during the graceful phase" && exitIdx < 0 {
			exitIdx = i
		}
		if r.Message == "agent stderr" && r.Level == slog.LevelWarn {
			if firstStderr < 0 {
				firstStderr = i
			}
			lines = append(lines, r.Attrs["line"])
			assert.Equal(t, "clientprotocol-adapter", r.Attrs["component"])
		}
	}
	assert.Equal(t, []string{"boom: no credentials", "second line"}, lines)
	require.GreaterOrEqual(t, exitIdx, 0, "the teardown ran")
	assert.Less(t, exitIdx, firstStderr, "teardown first, then the stderr lines")
}

func TestSS5_ConnectionEndedWithoutExit(t *testing.T) {
	h := newHarness(t, withDrain(200*time.Millisecond))
	err := h.startErr("close-stdout-before-init")
	assert.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "agent connection ended before responding"})
}

func TestSS6_StartErrorTable(t *testing.T) {
	h := newHarness(t)
	p := h.params()
	p.Agent.Command = "   "
	_, err := h.a.StartSession(context.Background(), p)
	assert.ErrorIs(t, err, &Error{Kind: KindAgentNotFound, Message: "agent command is empty or whitespace-only"})

	p = h.params()
	p.Agent.Command = "definitely-not-a-real-binary-xyz --acp"
	_, err = h.a.StartSession(context.Background(), p)
	assert.ErrorIs(t, err, &Error{Kind: KindAgentNotFound, Message: `agent command "definitely-not-a-real-binary-xyz" not found`})

	p = h.params()
	p.WorkspacePath = ""
	_, err = h.a.StartSession(context.Background(), p)
	assert.Equal(t, KindInvalidWorkspaceCwd, KindOf(err))

	p = h.params()
	p.MCPConfigPath = h.dir + "/missing.json"
	_, err = h.a.StartSession(context.Background(), p)
	assert.Equal(t, KindResponseError, KindOf(err))

	assert.Equal(t, KindResponseError, KindOf(h.startErr("newerr=-32603")))
	assert.Equal(t, KindCredentialUnverified, KindOf(h.startErr("newerr=-32000")))
	assert.Equal(t, KindPortExit, KindOf(h.startErr("exit-before-init")))
}
