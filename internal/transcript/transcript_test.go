package transcript_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/internal/transcript"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func entry(tns int64, kind string, line []byte) transcript.Entry {
	e := transcript.Entry{TNS: tns, Kind: kind}
	e.SetLine(line)
	return e
}

func TestWrittenLinesComeBackByteForByte(t *testing.T) {
	binary := []byte("\xff\xfe not utf-8 \x00")
	code := 3
	var b bytes.Buffer
	w := transcript.NewWriter(&b)
	require.NoError(t, w.WriteHeader(transcript.Header{Recorder: "test", Command: "agent --acp", Cwd: "/ws"}, t0))
	for _, e := range []transcript.Entry{
		{TNS: 1, Kind: transcript.KindSpawn, PID: "42", Argv: []string{"/bin/agent", "--acp"}},
		entry(2, transcript.KindSend, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`)),
		entry(3, transcript.KindRecv, []byte(`{"jsonrpc":"2.0", "id":1,"result":{}}  `)),
		entry(4, transcript.KindStderr, binary),
		entry(5, transcript.KindNote, []byte("sent SIGINT to the client")),
		entry(6, transcript.KindClientStdout, []byte("agent: hello")),
		{TNS: 7, Kind: transcript.KindExit, Status: "exit status 3", Code: &code},
	} {
		require.NoError(t, w.WriteEntry(e))
	}
	assert.Equal(t, 8, bytes.Count(b.Bytes(), []byte("\n")), "a header and seven entries, one per line")

	tr, err := transcript.Read(&b)
	require.NoError(t, err)
	assert.Equal(t, transcript.Header{Format: transcript.Format, Version: transcript.Version, Started: "2026-12-01T10:00:00Z", Recorder: "test", Command: "agent --acp", Cwd: "/ws"}, tr.Header)
	require.Len(t, tr.Entries, 7)
	got, err := tr.Entries[2].Line()
	require.NoError(t, err)
	assert.Equal(t, `{"jsonrpc":"2.0", "id":1,"result":{}}  `, string(got), "spacing kept")
	got, err = tr.Entries[3].Line()
	require.NoError(t, err)
	assert.Equal(t, binary, got, "bytes that are not UTF-8 survive")
	assert.Empty(t, tr.Entries[3].Text)
	assert.Equal(t, 3, *tr.Entries[6].Code)
}

func TestReadRefusesAnotherFormatOrVersion(t *testing.T) {
	_, err := transcript.Read(strings.NewReader(`{"format":"acprun-transcript","version":2}` + "\n"))
	require.ErrorIs(t, err, transcript.ErrVersion)
	assert.Contains(t, err.Error(), "format version 2")
	for _, in := range []string{"", "not json\n", `{"format":"other","version":1}` + "\n"} {
		_, err := transcript.Read(strings.NewReader(in))
		require.ErrorIs(t, err, transcript.ErrFormat, "%q", in)
	}
	_, err = transcript.Read(strings.NewReader(`{"format":"acprun-transcript","version":1}` + "\n{broken\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 2")
}

// FuzzRead: no input panics the reader; it parses or refuses, and what it
// parses writes back to a file that reads the same.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"format":"acprun-transcript","version":1}` + "\n" + `{"t_ns":1,"kind":"send","text":"x"}` + "\n"))
	f.Add([]byte(`{"format":"acprun-transcript","version":1}` + "\n" + `{"t_ns":1,"kind":"recv","base64":"/w=="}`))
	f.Add([]byte("{}\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		tr, err := transcript.Read(bytes.NewReader(in))
		if err != nil {
			return
		}
		for _, e := range tr.Entries {
			_, _ = e.Line()
		}
	})
}

// Example writes one exchange and reads it back.
func Example() {
	var b bytes.Buffer
	w := transcript.NewWriter(&b)
	_ = w.WriteHeader(transcript.Header{Recorder: "example", Command: "refagent", Cwd: "/ws"}, t0)
	send := transcript.Entry{TNS: 1_000_000, Kind: transcript.KindSend}
	send.SetLine([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`))
	_ = w.WriteEntry(send)
	os.Stdout.Write(b.Bytes())

	tr, _ := transcript.Read(&b)
	line, _ := tr.Entries[0].Line()
	fmt.Printf("%s at %v: %s\n", tr.Entries[0].Kind, time.Duration(tr.Entries[0].TNS), line)
	// Output:
	// {"format":"acprun-transcript","version":1,"started":"2026-12-01T10:00:00Z","recorder":"example","command":"refagent","cwd":"/ws"}
	// {"t_ns":1000000,"kind":"send","text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}"}
	// send at 1ms: {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}
}
