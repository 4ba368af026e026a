// Package transcript is acpkit's one wire-transcript file format: what
// `acprun --record FILE` writes of a session and what `acpcheck
// --transcripts DIR` writes of each check, so `acprun replay FILE` plays
// either back and `acprun show FILE` prints either as a timeline.
//
// # Format (version 1)
//
// JSON Lines, UTF-8. The first line is the header:
//
//	{"format":"acprun-transcript","version":1,"started":"2026-12-01T10:00:00.123456789Z",
//	 "recorder":"acprun v0.1.0 (go1.26.8 linux/amd64)","command":"gemini --acp","cwd":"/work"}
//
// Every other line is one entry, in the order the recorder saw them:
//
//	{"t_ns":1204331,"kind":"spawn","pid":"4242","argv":["/usr/bin/gemini","--acp"]}
//	{"t_ns":1859012,"kind":"send","text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",…}"}
//	{"t_ns":9120544,"kind":"recv","text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{…}}"}
//	{"t_ns":9120871,"kind":"stderr","text":"Loaded cached credentials."}
//	{"t_ns":51003877,"kind":"exit","status":"exit status 0","code":0}
//
// t_ns is monotonic nanoseconds since the header's start. The transcript
// is always the client's view of one agent: command and cwd are the
// agent's, send is a line the client wrote to the agent's stdin, recv a
// line the client read from the agent's stdout, stderr a line of the
// agent's stderr — each without its newline, exactly as it passed: "text"
// when the bytes are valid UTF-8, otherwise "base64" (standard encoding).
// spawn carries the agent's pid and argv; exit how it ended ("exit status
// 7", "signal: terminated") and its code (-1 for a signal).
//
// Three more kinds carry what a grader saw beside the wire: note (what the
// recorder did or observed, such as a signal sent or a process reaped),
// and client-stdout and client-stderr (a line the graded client wrote to
// its own output, when the client is what is graded). A reader ignores
// every kind it does not know, so replay plays only spawn, send, recv,
// stderr and exit.
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

// Format names the file type in the header. It says acprun because acprun
// wrote the first of these files; acpcheck writes the same.
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
	// KindNote is what the recorder did or saw that is not a line.
	KindNote = "note"
	// KindClientStdout and KindClientStderr are lines the graded client
	// wrote to its own stdout and stderr.
	KindClientStdout = "client-stdout"
	KindClientStderr = "client-stderr"
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

// Line returns the bytes of an entry that carries a line (send, recv,
// stderr, note, client-stdout, client-stderr).
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

// SetLine stores b as text or, when it is not UTF-8, as base64, so the
// bytes come back exactly.
func (e *Entry) SetLine(b []byte) {
	if utf8.Valid(b) {
		s := string(b)
		e.Text, e.Base64 = &s, ""
		return
	}
	e.Text, e.Base64 = nil, base64.StdEncoding.EncodeToString(b)
}

// ErrVersion is the kind of the error for a transcript of another format
// version; errors.Is matches it.
var ErrVersion = errors.New("transcript: unsupported format version")

// ErrFormat is the kind of the error for a file that is not a transcript.
var ErrFormat = errors.New("transcript: not an acprun transcript")

// CheckHeader decodes and checks a header line.
func CheckHeader(line []byte) (Header, error) {
	var h Header
	if err := json.Unmarshal(line, &h); err != nil || h.Format != Format {
		return h, fmt.Errorf("%w: its first line is not a header with \"format\":%q", ErrFormat, Format)
	}
	if h.Version != Version {
		return h, fmt.Errorf("%w: the file is format version %d and this program reads version %d only; record it again", ErrVersion, h.Version, Version)
	}
	return h, nil
}
