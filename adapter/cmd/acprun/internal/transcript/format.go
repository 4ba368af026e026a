// Package transcript is acprun's record of one session's wire and its
// replay: `acprun --record FILE` writes every line between the adapter and
// the runtime, byte for byte, with the runtime's stderr and its process
// events; `acprun replay FILE` then plays the runtime's side back to a
// live client, so a transcript of a real runtime becomes a regression test
// of the adapter.
//
// The format is acpkit's one transcript format, defined by
// acpkit.dev/internal/transcript (acpcheck --transcripts writes it too, so
// acprun replays a failed check's transcript as it replays a recording);
// this package names its types and reads it.
package transcript

import (
	"io"

	tfile "acpkit.dev/internal/transcript"
)

// The format's types and names, as acpkit.dev/internal/transcript defines
// them.
type (
	// Header is a transcript's first line.
	Header = tfile.Header
	// Entry is one line after the header.
	Entry = tfile.Entry
	// Transcript is a parsed transcript.
	Transcript = tfile.Transcript
)

// Format names the file type in the header; Version is the format version
// read and written.
const (
	Format  = tfile.Format
	Version = tfile.Version
)

// Entry kinds.
const (
	KindSpawn  = tfile.KindSpawn
	KindSend   = tfile.KindSend
	KindRecv   = tfile.KindRecv
	KindStderr = tfile.KindStderr
	KindExit   = tfile.KindExit
)

// ErrVersion and ErrFormat are the kinds of the errors for a transcript of
// another format version and for a file that is not a transcript.
var (
	ErrVersion = tfile.ErrVersion
	ErrFormat  = tfile.ErrFormat
)

// Read parses a transcript, refusing another format or version.
func Read(r io.Reader) (*Transcript, error) { return tfile.Read(r) }
