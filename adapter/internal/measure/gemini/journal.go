package gemini

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
)

// journal is what the session journal says about one session.
type journal struct {
	// ids are every message id seen, counted or not.
	ids map[string]bool
	// t sums the messages not inherited, one per id.
	t tally
}

type journalHeader struct {
	SessionID string `json:"sessionId"`
}

type journalLine struct {
	ID     string `json:"id"`
	Model  string `json:"model"`
	Tokens *struct {
		Input    int64 `json:"input"`
		Output   int64 `json:"output"`
		Cached   int64 `json:"cached"`
		Thoughts int64 `json:"thoughts"`
	} `json:"tokens"`
}

// readJournal reads every <home>/.gemini/tmp/<slug>/chats/session-*.jsonl
// whose first line names sessionID (GEM-8). After a session/load two files
// start with the same id, so the messages are the union over the files by
// id, the last occurrence winning; ids in skip are left out (GEM-3).
func readJournal(home, sessionID string, skip map[string]bool) journal {
	j := journal{ids: map[string]bool{}}
	if home == "" || sessionID == "" {
		return j
	}
	files, _ := filepath.Glob(filepath.Join(home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
	type entry struct {
		in, out, cached, thoughts int64
		model                     string
	}
	byID := map[string]entry{}
	var order []string
	for _, path := range files { // Glob sorts: older files first
		readJournalFile(path, sessionID, func(l journalLine) {
			j.ids[l.ID] = true
			if l.Tokens == nil || skip[l.ID] {
				return
			}
			if _, seen := byID[l.ID]; !seen {
				order = append(order, l.ID)
			}
			byID[l.ID] = entry{l.Tokens.Input, l.Tokens.Output, l.Tokens.Cached, l.Tokens.Thoughts, l.Model}
		})
	}
	for _, id := range order {
		e := byID[id]
		// Journal lines carry no role; the gemini-type messages are the
		// main conversation's.
		j.t.add(e.in, e.out, e.cached, e.thoughts, e.model, "main")
	}
	return j
}

// readJournalFile calls each for every message line of path when its first
// line's sessionId is sessionID; files over the bound are skipped, and so
// are lines over the line bound.
func readJournalFile(path, sessionID string, each func(journalLine)) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > journalFileBound {
		return
	}
	r := bufio.NewReaderSize(f, 64<<10)
	first := true
	for {
		line, ok, err := readLine(r)
		if ok {
			if first {
				var h journalHeader
				if json.Unmarshal(line, &h) != nil || h.SessionID != sessionID {
					return
				}
				first = false
			} else if len(line) > 0 && line[0] == '{' {
				var l journalLine
				if json.Unmarshal(line, &l) == nil && l.ID != "" {
					each(l)
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// readLine returns the next line without its line end; ok is false for a
// line over journalLineBound, which is consumed and skipped. err is the
// reader's error after the line (io.EOF on the last one).
func readLine(r *bufio.Reader) (line []byte, ok bool, err error) {
	var buf []byte
	over := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !over {
			if len(buf)+len(chunk) > journalLineBound+1 {
				over, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if over || (len(buf) == 0 && err != nil) {
			return nil, false, err
		}
		return bytes.TrimRight(buf, "\r\n"), true, err
	}
}
