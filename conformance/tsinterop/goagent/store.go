package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
)

// Role says who produced a conversation entry.
type role string

const (
	roleUser  role = "user"
	roleAgent role = "agent"
)

// entry is one replayable chunk of a conversation: a prompt's text or one
// agent_message_chunk the agent sent.
type entry struct {
	Role role   `json:"role"`
	Text string `json:"text"`
}

// savedSession is the on-disk form of a session, the same as agent.mjs
// writes, so the two agents can share a store.
type savedSession struct {
	History []entry `json:"history"`
}

// errCorruptSession marks a stored session file that cannot be decoded.
var errCorruptSession = errors.New("corrupt stored session")

// decodeSession parses a stored session file.
func decodeSession(data []byte) ([]entry, error) {
	var s savedSession
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%w: %w", errCorruptSession, err)
	}
	for i, e := range s.History {
		if e.Role != roleUser && e.Role != roleAgent {
			return nil, fmt.Errorf("%w: history[%d].role %q is neither %q nor %q", errCorruptSession, i, e.Role, roleUser, roleAgent)
		}
	}
	return s.History, nil
}

// session is one conversation and the prompt turn running in it, if any.
type session struct {
	history []entry
	turn    *turn
}

// store holds the sessions of this process and, when dir is set, mirrors
// each conversation to dir/<escaped id>.json so that a later process can
// load it (on stdio a fresh connection is a fresh process).
type store struct {
	dir string

	mu       sync.Mutex
	sessions map[gen.SessionID]*session
	next     int
}

func newStore(dir string) *store {
	return &store{dir: dir, sessions: make(map[gen.SessionID]*session), next: 1}
}

func (s *store) file(id gen.SessionID) string {
	// PathEscape turns "/" into %2F, so no id can leave dir.
	return filepath.Join(s.dir, url.PathEscape(string(id))+".json")
}

// create makes a new empty session under the next unused id "sess-N". With
// a directory, an exclusive create claims the id against other processes.
func (s *store) create() (gen.SessionID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		id := gen.SessionID("sess-" + strconv.Itoa(s.next))
		s.next++
		if _, ok := s.sessions[id]; ok {
			continue
		}
		if s.dir != "" {
			f, err := os.OpenFile(s.file(id), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err != nil {
				return "", fmt.Errorf("claim session id %s: %w", id, err)
			}
			_, werr := f.WriteString(`{"history":[]}`)
			if err := errors.Join(werr, f.Close()); err != nil {
				return "", fmt.Errorf("claim session id %s: %w", id, err)
			}
		}
		s.sessions[id] = &session{}
		return id, nil
	}
}

// errUnknownSession marks a session id neither this process nor the
// directory knows.
var errUnknownSession = errors.New("unknown session")

// lookupLocked returns the session, reading it from the directory when this
// process has not seen it. s.mu must be held.
func (s *store) lookupLocked(id gen.SessionID) (*session, error) {
	if sess, ok := s.sessions[id]; ok {
		return sess, nil
	}
	if s.dir == "" {
		return nil, fmt.Errorf("%w: %s", errUnknownSession, id)
	}
	data, err := os.ReadFile(s.file(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", errUnknownSession, id)
	}
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", id, err)
	}
	history, err := decodeSession(data)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	sess := &session{history: history}
	s.sessions[id] = sess
	return sess, nil
}

// saveLocked writes the session's conversation to the directory, if any.
// s.mu must be held.
func (s *store) saveLocked(id gen.SessionID, sess *session) error {
	if s.dir == "" {
		return nil
	}
	data, err := json.Marshal(savedSession{History: append([]entry{}, sess.history...)})
	if err != nil {
		return fmt.Errorf("encode session %s: %w", id, err)
	}
	// Write then rename, so a concurrent reader never sees half a file.
	tmp := s.file(id) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("save session %s: %w", id, err)
	}
	if err := os.Rename(tmp, s.file(id)); err != nil {
		return fmt.Errorf("save session %s: %w", id, err)
	}
	return nil
}
