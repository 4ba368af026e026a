package measure

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
)

// FileKey reports whether a session id can name a file a source looks for:
// a runtime's id never leads a reader to another directory, and never
// reads as a glob pattern.
func FileKey(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\\*?[\x00")
}

// Runtime is how a source knows its runtime: the agentInfo.name its
// handshake reports (MS-3), and the executables and npm packages a command
// line names it by (MS-2).
type Runtime struct {
	Name     string
	Programs []string
	Packages []string
}

// Recognize reports whether a handshake's agentInfo.name is this runtime's;
// the version plays no part (MS-3).
func (r Runtime) Recognize(name string) bool { return name != "" && name == r.Name }

// Claims decides an offer: never a remote launch (MS-2, RS-7); on a
// relaunch offer, the name the handshake reported (RS-4); else the command
// line naming the runtime (NamesRuntime).
func (r Runtime) Claims(l Launch) bool {
	switch {
	case l.Remote:
		return false
	case l.RuntimeName != "":
		return r.Recognize(l.RuntimeName)
	}
	return NamesRuntime(l.Argv(), r.Programs, r.Packages)
}

// Records reads the records one session leaves in its runtime's own files.
type Records interface {
	// Open starts reading sessionID's records for the launch that was
	// claimed. Whatever is there already is the session's past (a
	// continued conversation's history) and is never counted.
	Open(l Launch, sessionID string) error
	// Read folds every record written since the last read, reading at
	// most *budget bytes and taking them off *budget, and returns the
	// count since Open.
	Read(budget *int64) Count
	// Count is the count since Open, reading nothing.
	Count() Count
}

// FileSource is a Source for a runtime that writes its token usage to its
// own files anyway (MS-16, MS-17): claiming arms no variable and creates no
// directory, so the runtime runs exactly as its user set it up (another
// home would lose the user's login), and each drain reads the session's
// Records, polled as GEM-7 does and graded by an Account. Its methods are
// safe to call from different goroutines; Drain calls are serialized.
type FileSource struct {
	// SourceName is the registry's name for the source.
	SourceName string
	// Runtime is what the source claims and recognises.
	Runtime Runtime
	// Origin names the figures in LOG-24's record.
	Origin string
	// Records reads the session's records.
	Records Records
	// PollEvery and PollFor are the drain's poll: every PollEvery, for
	// up to PollFor, unless the records cover the turn's bound first.
	PollEvery, PollFor time.Duration

	mu      sync.Mutex
	launch  Launch
	claimed bool
	opened  bool
	closed  bool
	acct    Account
}

var _ Source = (*FileSource)(nil)

// Name identifies the source.
func (s *FileSource) Name() string { return s.SourceName }

// Recognize accepts exactly the runtime's handshake name (MS-3).
func (s *FileSource) Recognize(runtimeName string) bool { return s.Runtime.Recognize(runtimeName) }

// Claim claims a local launch whose command line names the runtime, or a
// relaunch offer for the name it recognises (MS-2, RS-4). It arms nothing.
func (s *FileSource) Claim(l Launch) (bool, error) {
	if !s.Runtime.Claims(l) {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.launch, s.claimed = l, true
	return true, nil
}

// Env is empty: nothing is armed (MS-17).
func (s *FileSource) Env() []string { return nil }

// Open starts measuring sessionID in the files of the claimed launch.
func (s *FileSource) Open(sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.claimed || s.closed {
		return errors.New(s.SourceName + " measurement source: open before a claim")
	}
	if err := s.Records.Open(s.launch, sessionID); err != nil {
		return err
	}
	s.opened, s.acct = true, Account{}
	return nil
}

// Drain answers with the run-cumulative figure after a turn whose presence
// signal was lowerBound (MS-6..MS-12; GEM-7, GEM-10..GEM-12 for one kind
// of record), reading at most DrainBound bytes.
func (s *FileSource) Drain(ctx context.Context, lowerBound int64) (Figure, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.opened || s.closed {
		return Figure{}, false
	}
	budget := int64(DrainBound)
	return s.acct.Drain(ctx, lowerBound, s.PollEvery, s.PollFor, s.Records.Count(), func() Count {
		return s.Records.Read(&budget)
	}, s.Origin)
}

// Close ends the source; idempotent, and safe on a source that never
// claimed. There is nothing to remove.
func (s *FileSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
