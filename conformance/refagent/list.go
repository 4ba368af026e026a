package refagent

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
)

// ListSessions pages through the sessions, oldest first, --list-page-size
// at a time; the cursor is the index of the page's first session.
func (ta *typedAgent) ListSessions(_ context.Context, p *gen.ListSessionsRequest) (*gen.ListSessionsResponse, error) {
	a := (*Agent)(ta)
	if !a.opts.List {
		return nil, a.notImplemented(gen.MethodSessionList)
	}
	all := a.store.list()
	if a.opts.ListOmitNewest && len(all) > 0 {
		all = all[:len(all)-1]
	}
	var sessions []Session
	for _, s := range all {
		if p.Cwd != nil && !a.opts.ListIgnoreCwd && filepath.Clean(s.Cwd) != filepath.Clean(*p.Cwd) {
			continue
		}
		sessions = append(sessions, s)
	}
	start := 0
	if p.Cursor != nil {
		n, err := strconv.Atoi(strings.TrimPrefix(*p.Cursor, "from-"))
		if err != nil || n < 0 || n > len(sessions) {
			return nil, errorf(acpsdk.CodeInvalidParams, "bad cursor %q", *p.Cursor)
		}
		start = n
	}
	end := min(start+a.opts.ListPageSize, len(sessions))
	r := &gen.ListSessionsResponse{Sessions: []gen.SessionInfo{}}
	for _, s := range sessions[start:end] {
		r.Sessions = append(r.Sessions, gen.SessionInfo{SessionID: gen.SessionID(s.ID), Cwd: s.Cwd})
	}
	switch {
	case a.opts.ListCursorLoop:
		next := "from-0"
		r.NextCursor = &next
	case end < len(sessions):
		next := "from-" + strconv.Itoa(end)
		r.NextCursor = &next
	}
	return r, nil
}
