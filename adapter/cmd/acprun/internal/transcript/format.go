// Package transcript is acprun's record of one session's wire and its
// replay: `acprun --record FILE` writes every line between the adapter and
// the runtime, byte for byte, with the runtime's stderr and its process
// events; `acprun replay FILE` then plays the runtime's side back to a
// live client, so a transcript of a real runtime becomes a regression test
// of the adapter.
//
// # Format (version 1)
//
// JSON Lines, UTF-8. The first line is the header:
//
//	{"format":"acprun-transcript","version":1,"started":"2026-12-01T10:00:00.123456789Z",
//	 "recorder":"acprun v0.1.0 (go1.26.8 linux/amd64)","command":"gemini --acp","cwd":"/work"}
//
// Every other line is one entry, in the order the adapter saw them:
//
//	{"t_ns":1204331,"kind":"spawn","pid":"4242","argv":["/usr/bin/gemini","--acp"]}
//	{"t_ns":1859012,"kind":"send","text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",…}"}
//	{"t_ns":9120544,"kind":"recv","text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{…}}"}
//	{"t_ns":9120871,"kind":"stderr","text":"Loaded cached credentials."}
//	{"t_ns":51003877,"kind":"exit","status":"exit status 0","code":0}
//
// t_ns is monotonic nanoseconds since the header's start. send is a line
// the adapter wrote to the runtime's stdin, recv a line it read from the
// runtime's stdout, stderr a line of the runtime's stderr — each without
// its newline, exactly as it passed: "text" when the bytes are valid UTF-8,
// otherwise "base64" (standard encoding). spawn carries the runtime's pid
// and argv; exit how it ended ("exit status 7", "signal: terminated") and
// its code (-1 for a signal).
//
// A reader refuses any other "format" and any "version" but Version, with
// a message that says which version it read.
package transcript

import (
	"encoding/base64"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/segmentio/encoding/json"
)

// Format names the file type in the header.
const Format = "acprun-transcript"

// Version is the format version this package writes and reads.
const Version = 1

// Entry kinds.
const (
	KindSpawn  = "spawn"
	KindSend   = "send"
	KindRecv   = "recv"
	KindStderr = "stderr"
	KindExit   = "exit"
)

// Header is a transcript's first line.
type Header struct {
	Format   string `json:"format"`
	Version  int    `json:"version"`
	Started  string `json:"started"`
	Recorder string `json:"recorder"`
	Command  string `json:"command"`
	Cwd      string `json:"cwd"`
}

// Entry is one line after the header.
type Entry struct {
	TNS    int64    `json:"t_ns"`
	Kind   string   `json:"kind"`
	Text   *string  `json:"text,omitempty"`
	Base64 string   `json:"base64,omitempty"`
	PID    string   `json:"pid,omitempty"`
	Argv   []string `json:"argv,omitempty"`
	Status string   `json:"status,omitempty"`
	Code   *int     `json:"code,omitempty"`
}

// Line returns a send, recv or stderr entry's bytes.
func (e Entry) Line() ([]byte, error) {
	switch {
	case e.Text != nil:
		return []byte(*e.Text), nil
	case e.Base64 != "":
		b, err := base64.StdEncoding.DecodeString(e.Base64)
		if err != nil {
			return nil, fmt.Errorf("transcript: entry at %dns: %w", e.TNS, err)
		}
		return b, nil
	}
	return nil, nil
}

// setLine stores b as text or, when it is not UTF-8, as base64, so the
// bytes come back exactly.
func (e *Entry) setLine(b []byte) {
	if utf8.Valid(b) {
		s := string(b)
		e.Text = &s
		return
	}
	e.Base64 = base64.StdEncoding.EncodeToString(b)
}

// ErrVersion is the kind of the error for a transcript of another format
// version; errors.Is matches it.
var ErrVersion = errors.New("transcript: unsupported format version")

// ErrFormat is the kind of the error for a file that is not a transcript.
var ErrFormat = errors.New("transcript: not an acprun transcript")

// checkHeader decodes and checks a header line.
func checkHeader(line []byte) (Header, error) {
	var h Header
	if err := json.Unmarshal(line, &h); err != nil || h.Format != Format {
		return h, fmt.Errorf("%w: its first line is not a header with \"format\":%q", ErrFormat, Format)
	}
	if h.Version != Version {
		return h, fmt.Errorf("%w: the file is format version %d and this acprun reads version %d only; record it again with this acprun", ErrVersion, h.Version, Version)
	}
	return h, nil
}
