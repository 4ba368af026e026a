package refagent

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/segmentio/encoding/json"
)

// Session is a conversation the agent keeps, in memory and, with
// --state-dir, as DIR/<id>.json so another process can load it.
type Session struct {
	ID      string     `json:"sessionId"`
	Cwd     string     `json:"cwd"`
	History []Exchange `json:"history"`
	// Mode and Effort are the session's current mode (--modes) and value of
	// its effort option (--config-options).
	Mode   string `json:"mode,omitempty"`
	Effort string `json:"effort,omitempty"`
	// seq orders sessions by creation, for session/list.
	seq int
}

// Exchange is one turn of a conversation.
type Exchange struct {
	User  string `json:"user"`
	Agent string `json:"agent"`
}

// store holds the sessions. Ids are "sess-N", the first N not already in
// use (in memory or in the state directory), so ids are deterministic.
type store struct {
	dir string

	mu       sync.Mutex
	sessions map[string]*Session
	next     int
}

func newStore(dir string) *store { return &store{dir: dir, sessions: map[string]*Session{}} }

func (st *store) path(id string) string { return filepath.Join(st.dir, id+".json") }

// validID keeps a client-chosen id from naming a path outside the state
// directory.
func validID(id string) bool {
	return id != "" && !strings.ContainsAny(id, `/\`) && id != "." && id != ".."
}

func (st *store) exists(id string) bool {
	if _, ok := st.sessions[id]; ok {
		return true
	}
	if st.dir == "" {
		return false
	}
	_, err := os.Stat(st.path(id))
	return err == nil
}

func (st *store) create(cwd string) (*Session, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	var id string
	for {
		st.next++
		id = fmt.Sprintf("sess-%d", st.next)
		if !st.exists(id) {
			break
		}
	}
	s := &Session{ID: id, Cwd: cwd, History: []Exchange{}, seq: st.next}
	st.sessions[id] = s
	return s, st.saveLocked(s)
}

func (st *store) get(id string) (*Session, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if s, ok := st.sessions[id]; ok {
		return s, true
	}
	if st.dir == "" || !validID(id) {
		return nil, false
	}
	b, err := os.ReadFile(st.path(id))
	if err != nil {
		return nil, false
	}
	var s Session
	if json.Unmarshal(b, &s) != nil || s.ID != id {
		return nil, false
	}
	st.sessions[id] = &s
	return &s, true
}

// forget drops a session from memory (session/close); it reports whether
// the session was known.
func (st *store) forget(id string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	known := st.exists(id)
	delete(st.sessions, id)
	return known
}

// remove deletes a session everywhere; an unknown id is not an error.
func (st *store) remove(id string) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.sessions, id)
	if st.dir == "" || !validID(id) {
		return nil
	}
	if err := os.Remove(st.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (st *store) append(s *Session, x Exchange) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	s.History = append(s.History, x)
	if _, ok := st.sessions[s.ID]; !ok {
		return nil // a session served only by --accept-unknown-session
	}
	return st.saveLocked(s)
}

func (st *store) saveLocked(s *Session) error {
	if st.dir == "" {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := st.path(s.ID) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, st.path(s.ID))
}

// appendJSONLine appends v as one JSON line to the file at path.
func appendJSONLine(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(append(b, '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// list returns the sessions in memory and in the state directory, oldest
// first.
func (st *store) list() []Session {
	st.mu.Lock()
	defer st.mu.Unlock()
	byID := map[string]Session{}
	if st.dir != "" {
		files, _ := filepath.Glob(filepath.Join(st.dir, "*.json"))
		for _, f := range files {
			var s Session
			if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &s) == nil && validID(s.ID) {
				_, _ = fmt.Sscanf(s.ID, "sess-%d", &s.seq)
				byID[s.ID] = s
			}
		}
	}
	for id, s := range st.sessions {
		byID[id] = *s
	}
	out := make([]Session, 0, len(byID))
	for _, s := range byID {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Session) int { return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.ID, b.ID)) })
	return out
}

// update changes a session's state under the store's lock, saves it, and
// returns a copy of the result.
func (st *store) update(s *Session, change func(*Session)) (Session, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	change(s)
	if _, ok := st.sessions[s.ID]; !ok {
		return *s, nil
	}
	return *s, st.saveLocked(s)
}

// history returns a copy of s's exchanges, safe against a turn appending.
func (st *store) history(s *Session) []Exchange {
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]Exchange(nil), s.History...)
}
