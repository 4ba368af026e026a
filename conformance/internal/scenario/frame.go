// Package scenario is acpcheck's scenario agent: the process a graded
// client starts as its agent (the command line acpcheck substitutes for
// {agent}). It plays no part of the protocol itself. It relays its stdin
// to acpcheck's grader and the grader's bytes to its stdout, over a
// private Unix socket named on its command line, and reports what only
// the agent process can see: its pid and argv, its stdin ending, the
// signals it receives and its own exit. So one client run is graded even
// when the client starts the agent itself, and the whole scenario (what
// the agent says, and when) lives in the grader.
//
// The socket carries frames: one kind byte, a 4-byte big-endian length,
// then that many bytes. A frame is at most MaxFrame bytes; longer data is
// sent as several frames of the same kind.
package scenario

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Frame kinds the agent sends to the grader.
const (
	// KindHello opens a connection: a JSON Hello.
	KindHello byte = 'h'
	// KindStdin is bytes the agent read from its stdin (what the client
	// wrote), in the chunks they arrived.
	KindStdin byte = 'i'
	// KindStdinEnd says the agent's stdin ended; the data is empty at end
	// of stream, else the read error.
	KindStdinEnd byte = 'e'
	// KindSignal names a signal the agent received ("interrupt",
	// "terminated", "hangup"); the agent does not exit for it.
	KindSignal byte = 's'
	// KindNote is anything else worth a line in the transcript, such as a
	// failed write to stdout.
	KindNote byte = 'n'
	// KindExiting says the agent exits now, with the decimal exit code.
	KindExiting byte = 'x'
)

// Frame kinds the grader sends to the agent.
const (
	// KindStdout is bytes to write to the agent's stdout (to the client).
	KindStdout byte = 'o'
	// KindStderr is bytes to write to the agent's stderr.
	KindStderr byte = 'r'
	// KindCloseStdout closes the agent's stdout.
	KindCloseStdout byte = 'c'
	// KindExit makes the agent exit with the decimal exit code.
	KindExit byte = 'q'
)

// MaxFrame bounds one frame's data.
const MaxFrame = 1 << 20

// ErrFrame is the kind of every malformed-frame error.
var ErrFrame = errors.New("scenario: bad frame")

// Hello is the first frame of a connection: which grading run the agent
// belongs to (Token, from its command line) and what it is.
type Hello struct {
	Token string   `json:"token"`
	PID   int      `json:"pid"`
	Argv  []string `json:"argv"`
	Cwd   string   `json:"cwd"`
}

// WriteFrame writes data as frames of kind, splitting it at MaxFrame; an
// empty data writes one empty frame.
func WriteFrame(w io.Writer, kind byte, data []byte) error {
	for first := true; first || len(data) > 0; first = false {
		n := min(len(data), MaxFrame)
		buf := make([]byte, 5+n)
		buf[0] = kind
		binary.BigEndian.PutUint32(buf[1:5], uint32(n))
		copy(buf[5:], data[:n])
		if _, err := w.Write(buf); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// ReadFrame reads one frame. It returns io.EOF only at a clean end
// between frames, and an ErrFrame error for a frame longer than MaxFrame
// or cut short.
func ReadFrame(r io.Reader) (kind byte, data []byte, err error) {
	var head [5]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, nil, fmt.Errorf("%w: cut short in its header", ErrFrame)
		}
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(head[1:])
	if n > MaxFrame {
		return 0, nil, fmt.Errorf("%w: %d bytes, more than %d", ErrFrame, n, MaxFrame)
	}
	data = make([]byte, n)
	if got, err := io.ReadFull(r, data); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, nil, fmt.Errorf("%w: cut short after %d of %d bytes", ErrFrame, got, n)
		}
		return 0, nil, err
	}
	return head[0], data, nil
}
