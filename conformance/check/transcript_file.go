package check

import (
	"io"
	"strings"
	"time"

	tfile "acpkit.dev/internal/transcript"
)

// event is what a spawn or exit line knows beyond its text.
type event struct {
	pid    string
	argv   []string
	status string
	code   int
}

// Recording names what a transcript file's header says: the agent's
// command line and working directory, and the wall-clock time the
// transcript's clock started. An [Instance] that knows them has a
// Recording method returning them.
type Recording struct {
	Command string
	Cwd     string
	Started time.Time
}

// recorded is implemented by instances that can say what they recorded.
type recorded interface {
	Recording() Recording
}

// Recording is the agent's command line and directory, and the launch.
func (s *Session) Recording() Recording {
	rec := Recording{Command: s.url, Cwd: s.Cwd, Started: s.tr.started()}
	if s.cmd != nil {
		rec.Command = strings.Join(s.cmd.Args, " ")
	}
	return rec
}

// WriteTranscriptFile writes res's transcript in acpkit's one transcript
// format (acpkit.dev/internal/transcript, the format acprun --record
// writes), so `acprun replay` plays it back and `acprun show` prints it.
// recorder names the program that wrote it. Lines are written exactly as
// they passed (secrets masked), not cut to the report's length.
func WriteTranscriptFile(w io.Writer, res Result, recorder string) error {
	tw := tfile.NewWriter(w)
	rec := res.recording
	if rec.Started.IsZero() {
		rec.Started = time.Now()
	}
	if err := tw.WriteHeader(tfile.Header{Recorder: recorder, Command: rec.Command, Cwd: rec.Cwd}, rec.Started); err != nil {
		return err
	}
	for _, l := range res.Transcript {
		if err := tw.WriteEntry(fileEntry(l)); err != nil {
			return err
		}
	}
	return nil
}

// fileEntry is l as a transcript file entry.
func fileEntry(l Line) tfile.Entry {
	e := tfile.Entry{TNS: l.At.Nanoseconds(), Kind: string(l.Dir)}
	switch {
	case l.Dir == DirSpawn && l.event != nil:
		e.PID, e.Argv = l.event.pid, l.event.argv
	case l.Dir == DirExit && l.event != nil:
		code := l.event.code
		e.Status, e.Code = l.event.status, &code
	default:
		e.SetLine(l.Bytes())
	}
	return e
}
