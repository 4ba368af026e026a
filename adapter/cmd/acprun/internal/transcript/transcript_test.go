package transcript

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"acpkit.dev/adapter"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// record writes a transcript of the given events, one millisecond apart.
func record(t *testing.T, events ...adapter.WireEvent) []byte {
	t.Helper()
	var b bytes.Buffer
	r := NewRecorder(&b)
	r.Tap(adapter.WireEvent{Kind: adapter.WireSend, Line: []byte("dropped: before Start")})
	r.Start(Header{Recorder: "test", Command: "agent --acp", Cwd: "/ws"}, t0)
	for i, e := range events {
		e.Time = t0.Add(time.Duration(i+1) * time.Millisecond)
		r.Tap(e)
	}
	require.NoError(t, r.Err())
	return b.Bytes()
}

func line(kind adapter.WireKind, s string) adapter.WireEvent {
	return adapter.WireEvent{Kind: kind, Line: []byte(s)}
}

func TestRecordedLinesComeBackByteForByte(t *testing.T) {
	binary := "\xff\xfe not utf-8 \x00"
	b := record(t,
		adapter.WireEvent{Kind: adapter.WireSpawn, AgentPID: "42", Argv: []string{"/bin/agent", "--acp"}},
		line(adapter.WireSend, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`),
		line(adapter.WireRecv, `{"jsonrpc":"2.0", "id":1,"result":{}}  `),
		line(adapter.WireStderr, binary),
		adapter.WireEvent{Kind: adapter.WireExit, ExitStatus: "exit status 3", ExitCode: 3},
	)
	assert.Equal(t, 6, bytes.Count(b, []byte("\n")), "a header and five entries, one per line")
	tr, err := Read(bytes.NewReader(b))
	require.NoError(t, err)
	assert.Equal(t, Header{Format: Format, Version: Version, Started: "2026-12-01T10:00:00Z", Recorder: "test", Command: "agent --acp", Cwd: "/ws"}, tr.Header)
	require.Len(t, tr.Entries, 5)
	assert.Equal(t, "42", tr.Entries[0].PID)
	assert.Equal(t, []string{"/bin/agent", "--acp"}, tr.Entries[0].Argv)
	got, err := tr.Entries[2].Line()
	require.NoError(t, err)
	assert.Equal(t, `{"jsonrpc":"2.0", "id":1,"result":{}}  `, string(got), "spacing kept")
	got, err = tr.Entries[3].Line()
	require.NoError(t, err)
	assert.Equal(t, binary, string(got), "bytes that are not UTF-8 survive")
	assert.NotEmpty(t, tr.Entries[3].Base64)
	assert.Equal(t, "exit status 3", tr.Entries[4].Status)
	assert.Equal(t, 3, *tr.Entries[4].Code)
	for i, e := range tr.Entries {
		assert.Equal(t, int64(i+1)*1e6, e.TNS, "monotonic nanoseconds since the start")
	}
}

func TestAnOlderFormatVersionIsRefused(t *testing.T) {
	_, err := Read(strings.NewReader(`{"format":"acprun-transcript","version":0,"started":"2026-01-01T00:00:00Z"}` + "\n"))
	require.ErrorIs(t, err, ErrVersion)
	assert.Equal(t, "transcript: unsupported format version: the file is format version 0 and this program reads version 1 only; record it again", err.Error())
	_, err = Read(strings.NewReader(`{"jsonrpc":"2.0"}` + "\n"))
	require.ErrorIs(t, err, ErrFormat)
	_, err = Read(strings.NewReader(""))
	require.ErrorIs(t, err, ErrFormat)
}

// session is a recorded exchange: one request of the client answered with
// a notification and a response.
func session(t *testing.T, exit adapter.WireEvent) *Transcript {
	b := record(t,
		line(adapter.WireSend, `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}`),
		line(adapter.WireRecv, `{"jsonrpc":"2.0","method":"session/update","params":{"x":1}}`),
		line(adapter.WireStderr, "working"),
		line(adapter.WireRecv, `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`),
		exit,
	)
	tr, err := Read(bytes.NewReader(b))
	require.NoError(t, err)
	return tr
}

var terminated = adapter.WireEvent{Kind: adapter.WireExit, ExitStatus: "signal: terminated", ExitCode: -1}

func TestReplayAnswersTheLiveClientInRecordedOrder(t *testing.T) {
	var out, errb bytes.Buffer
	code, err := Replay(session(t, terminated), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"live":true}}`+"\n"), &out, &errb)
	require.NoError(t, err)
	assert.Equal(t, 0, code)
	assert.Equal(t, `{"jsonrpc":"2.0","method":"session/update","params":{"x":1}}`+"\n"+
		`{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`+"\n", out.String(), "byte for byte when the ids agree")
	assert.Equal(t, "working\n", errb.String())
}

func TestReplayAnswersUnderTheLiveRequestID(t *testing.T) {
	var out bytes.Buffer
	_, err := Replay(session(t, terminated), strings.NewReader(`{"jsonrpc":"2.0","id":"live-7","method":"session/prompt"}`+"\n"), &out, io.Discard)
	require.NoError(t, err)
	assert.Contains(t, out.String(), `"id":"live-7"`)
	assert.NotContains(t, out.String(), `"id":1`)
}

func TestReplayRefusesADivergingClient(t *testing.T) {
	var out bytes.Buffer
	code, err := Replay(session(t, terminated), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"session/load"}`+"\n"), &out, io.Discard)
	require.True(t, errors.Is(err, ErrDiverged), "%v", err)
	assert.Equal(t, 1, code)
	assert.Contains(t, err.Error(), "expected the client's next message to be a session/prompt request, got a session/load request")
	assert.Empty(t, out.String(), "nothing is answered to the wrong request")
}

func TestReplayOfACrashExitsWithItsCodeAtOnce(t *testing.T) {
	b := record(t,
		line(adapter.WireSend, `{"jsonrpc":"2.0","id":1,"method":"session/prompt"}`),
		adapter.WireEvent{Kind: adapter.WireExit, ExitStatus: "exit status 7", ExitCode: 7},
	)
	tr, err := Read(bytes.NewReader(b))
	require.NoError(t, err)
	// stdin stays open: the replay must not wait for it.
	r, w := io.Pipe()
	defer w.Close()
	go func() { _, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"session/prompt"}` + "\n")) }()
	code, err := Replay(tr, r, io.Discard, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 7, code)
}

func TestReplayRefusesMoreThanTheRecordingHolds(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"session/prompt"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"session/prompt"}` + "\n"
	code, err := Replay(session(t, terminated), strings.NewReader(in), io.Discard, io.Discard)
	require.ErrorIs(t, err, ErrDiverged)
	assert.Equal(t, 1, code)
	assert.Contains(t, err.Error(), "the client sent a session/prompt request after the recorded session ended")
}

func TestReplayEndsWhenTheClientStopsEarly(t *testing.T) {
	code, err := Replay(session(t, terminated), strings.NewReader(""), io.Discard, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 0, code)
}

// FuzzRead checks that no file panics the reader, the replay or the
// timeline: it parses or refuses.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"format":"acprun-transcript","version":1}` + "\n" + `{"t_ns":1,"kind":"send","text":"x"}` + "\n"))
	f.Add([]byte(`{"format":"acprun-transcript","version":1}` + "\n" + `{"t_ns":1,"kind":"recv","base64":"!!"}` + "\n"))
	f.Add([]byte(`{"format":"acprun-transcript","version":2}`))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, e := range tr.Entries {
			_, _ = e.Line()
		}
		_, _ = Replay(tr, bytes.NewReader(nil), io.Discard, io.Discard)
		_ = Show(io.Discard, tr)
	})
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
