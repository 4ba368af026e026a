package check

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
)

// maxListPages bounds how many session/list pages acpcheck follows: an
// agent whose cursors never end must not keep a check running forever.
const maxListPages = 200

// listedSession is one entry of a session/list answer.
type listedSession struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
}

// listSessions follows session/list's cursors from the first page to the
// last (cwd, when set, filters) and returns every session listed.
func (s *Session) listSessions(ctx context.Context, cwd string) ([]listedSession, error) {
	var all []listedSession
	seen := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		if page > maxListPages {
			return nil, Failf("session/list paging did not end after %d pages", maxListPages)
		}
		params := map[string]any{}
		if cwd != "" {
			params["cwd"] = cwd
		}
		if cursor != "" {
			params["cursor"] = cursor
		}
		m, err := s.Call(ctx, gen.MethodSessionList, params)
		if err != nil {
			return nil, Failf("session/list (page %d): %v", page, err)
		}
		if m.Error != nil {
			return nil, Failf("session/list (page %d) answered %v", page, m.Error)
		}
		var r struct {
			Sessions   json.RawMessage `json:"sessions"`
			NextCursor *string         `json:"nextCursor"`
		}
		if err := json.Unmarshal(m.Result, &r); err != nil || kindOf(r.Sessions) != "an array" {
			return nil, Failf("session/list (page %d) answered %s, want a sessions array", page, describe(m))
		}
		var sessions []listedSession
		if err := json.Unmarshal(r.Sessions, &sessions); err != nil {
			return nil, Failf("session/list (page %d) sessions do not decode: %v", page, err)
		}
		all = append(all, sessions...)
		// An absent (or empty) nextCursor is the last page.
		if r.NextCursor == nil || *r.NextCursor == "" {
			return all, nil
		}
		if seen[*r.NextCursor] {
			return nil, Failf("session/list answered cursor %q a second time (page %d): its paging never ends", *r.NextCursor, page)
		}
		seen[*r.NextCursor] = true
		cursor = *r.NextCursor
	}
}

// findListed returns the entry for sid among ls.
func findListed(ls []listedSession, sid string) (listedSession, bool) {
	i := slices.IndexFunc(ls, func(l listedSession) bool { return l.SessionID == sid })
	if i < 0 {
		return listedSession{}, false
	}
	return ls[i], true
}

// listedSessions creates n sessions and returns their ids once session/list
// lists them all. An agent may list a session only once it holds a
// conversation, so a session not listed at first gets one turn.
func listedSessions(ctx context.Context, s *Session, n int) ([]string, error) {
	var ids []string
	for range n {
		sid, err := s.NewSession(ctx)
		if err != nil {
			return nil, prereq(err)
		}
		ids = append(ids, sid)
	}
	ls, err := s.listSessions(ctx, "")
	if err != nil {
		return nil, err
	}
	var turned []string
	for _, sid := range ids {
		if _, ok := findListed(ls, sid); ok {
			continue
		}
		if _, err := s.Prompt(ctx, sid, TurnPrompt); err != nil {
			return nil, prereq(err)
		}
		turned = append(turned, sid)
	}
	if len(turned) > 0 {
		if ls, err = s.listSessions(ctx, ""); err != nil {
			return nil, err
		}
	}
	for _, sid := range ids {
		l, ok := findListed(ls, sid)
		if !ok {
			after := ""
			if slices.Contains(turned, sid) {
				after = ", even after a turn in it"
			}
			return nil, Failf("session/list does not list session %q, created in %s%s (%d sessions listed)", sid, s.Cwd, after, len(ls))
		}
		if !sameDir(l.Cwd, s.Cwd) {
			return nil, Failf("session/list gives session %q the cwd %q, want %q (absolute, as created)", sid, l.Cwd, s.Cwd)
		}
	}
	return ids, nil
}

// sameDir compares two directories after resolving symbolic links (a
// temporary directory may be reached through one).
func sameDir(a, b string) bool {
	if !filepath.IsAbs(a) {
		return false
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}

func checkList(ctx context.Context, s *Session) error {
	if _, err := gated(ctx, s, GateList); err != nil {
		return err
	}
	// Two sessions, so an agent that pages by one has a second page.
	_, err := listedSessions(ctx, s, 2)
	return err
}

func checkListCwd(ctx context.Context, s *Session) error {
	if _, err := gated(ctx, s, GateList); err != nil {
		return err
	}
	ids, err := listedSessions(ctx, s, 1)
	if err != nil {
		return prereq(err) // session.list grades plain listing
	}
	sid := ids[0]
	// Listing itself (errors, paging) is session.list's to grade.
	ls, err := s.listSessions(ctx, s.Cwd)
	if err != nil {
		return prereq(err)
	}
	if _, ok := findListed(ls, sid); !ok {
		return Failf("session/list with cwd %q does not list session %q, created there", s.Cwd, sid)
	}
	// A directory no session was ever created in.
	other, err := os.MkdirTemp("", "acpcheck-other-cwd-")
	if err != nil {
		return Skipf("making a second directory to filter by: %v", err)
	}
	defer os.Remove(other)
	ls, err = s.listSessions(ctx, other)
	if err != nil {
		return prereq(err)
	}
	for _, l := range ls {
		if l.SessionID == sid || !sameDir(l.Cwd, other) {
			return Failf("session/list with cwd %q lists session %q of %q: the filter is ignored", other, l.SessionID, l.Cwd)
		}
	}
	return nil
}

// UnknownModeID and UnknownConfigID name a mode and a configuration
// option no agent offers; UnknownConfigValue is a value none has.
const (
	UnknownModeID      = "acpcheck-no-such-mode"
	UnknownConfigID    = "acpcheck-no-such-option"
	UnknownConfigValue = "acpcheck-no-such-value"
)

// modeSession creates a session and returns it with the mode to switch
// to: another advertised mode when there is one. Mode ids are opaque
// strings (Copilot CLI's are URLs), used exactly as advertised.
func modeSession(ctx context.Context, s *Session) (*SessionSetup, string, error) {
	if _, err := s.Initialize(ctx); err != nil {
		return nil, "", prereq(err)
	}
	setup, err := s.CreateSession(ctx)
	if err != nil {
		return nil, "", prereq(err)
	}
	if setup.Modes == nil {
		return nil, "", Skipf("agent does not advertise %s (session/new answered no available modes)", GateModes)
	}
	target := setup.Modes.AvailableModes[0].ID
	for _, m := range setup.Modes.AvailableModes {
		if m.ID != setup.Modes.CurrentModeID {
			target = m.ID
			break
		}
	}
	return setup, target, nil
}

// setMode sets the mode and returns the modes the agent confirmed for the
// session before it answered a following request: those named by a
// current_mode_update, or by a config_option_update's mode option (the
// protocol's newer way to say the same, which config options supersede
// modes with).
func (s *Session) setMode(ctx context.Context, sid, mode string) ([]string, error) {
	from := s.Mark()
	m, err := s.Call(ctx, gen.MethodSessionSetMode, map[string]any{"sessionId": sid, "modeId": mode})
	if err != nil {
		return nil, Failf("session/set_mode %q: %v", mode, err)
	}
	if m.Error != nil {
		return nil, Failf("session/set_mode to the advertised mode %q answered %v", mode, m.Error)
	}
	_, barrier, err := s.ping(ctx)
	if err != nil {
		return nil, Failf("barrier request after session/set_mode: %v", err)
	}
	var named []string
	for _, u := range Updates(between(s.Since(from), barrier.Seq)) {
		if u.SessionID != sid {
			continue
		}
		var p struct {
			Update struct {
				CurrentModeID string            `json:"currentModeId"`
				ConfigOptions []json.RawMessage `json:"configOptions"`
			} `json:"update"`
		}
		_ = json.Unmarshal(u.Msg.Params, &p)
		switch u.Kind {
		case gen.SessionUpdateCurrentModeUpdateTag:
			named = append(named, p.Update.CurrentModeID)
		case gen.SessionUpdateConfigOptionUpdateTag:
			for _, o := range selectOptions(p.Update.ConfigOptions) {
				if o.Category == string(gen.SessionConfigOptionCategoryMode) {
					named = append(named, o.CurrentValue)
				}
			}
		}
	}
	return named, nil
}

func checkSetMode(ctx context.Context, s *Session) error {
	setup, target, err := modeSession(ctx, s)
	if err != nil {
		return err
	}
	named, err := s.setMode(ctx, setup.ID, target)
	if err != nil {
		return err
	}
	for _, id := range named {
		if id != target {
			return Failf("after session/set_mode %q, the agent names mode %q current", target, id)
		}
	}
	m, err := s.Call(ctx, gen.MethodSessionSetMode, map[string]any{"sessionId": setup.ID, "modeId": UnknownModeID})
	if err != nil {
		return Failf("session/set_mode %q: %v", UnknownModeID, err)
	}
	if m.Error == nil {
		return Failf("session/set_mode to %q, a mode the agent did not advertise, answered %s, want an error", UnknownModeID, describe(m))
	}
	return nil
}

func checkModeUpdate(ctx context.Context, s *Session) error {
	setup, target, err := modeSession(ctx, s)
	if err != nil {
		return prereq(err) // session.set-mode grades set_mode itself
	}
	named, err := s.setMode(ctx, setup.ID, target)
	if err != nil {
		return prereq(err)
	}
	if !slices.Contains(named, target) {
		return Failf("session/set_mode %q was confirmed by neither a current_mode_update nor a config_option_update of the mode option before the agent answered a following request", target)
	}
	return nil
}

// configOption is a select configuration option, as the wire had it.
type configOption struct {
	ID           string
	Category     string
	CurrentValue string
	Values       []string
}

// selectOptions reads the select options of raw configOptions (boolean
// ones need a client capability acpcheck does not offer), flattening
// grouped values.
func selectOptions(raw []json.RawMessage) []configOption {
	var out []configOption
	for _, r := range raw {
		var o struct {
			ID           string          `json:"id"`
			Type         string          `json:"type"`
			Category     string          `json:"category"`
			CurrentValue json.RawMessage `json:"currentValue"`
			Options      []struct {
				Value   *string `json:"value"`
				Options []struct {
					Value string `json:"value"`
				} `json:"options"`
			} `json:"options"`
		}
		if json.Unmarshal(r, &o) != nil || o.Type != "select" || o.ID == "" {
			continue
		}
		opt := configOption{ID: o.ID, Category: o.Category}
		_ = json.Unmarshal(o.CurrentValue, &opt.CurrentValue)
		for _, v := range o.Options {
			if v.Value != nil {
				opt.Values = append(opt.Values, *v.Value)
			}
			for _, g := range v.Options {
				opt.Values = append(opt.Values, g.Value)
			}
		}
		if len(opt.Values) > 0 {
			out = append(out, opt)
		}
	}
	return out
}

// pickConfigOption chooses the option to set and its new value: a mode
// selector first (the least disruptive), then any, preferring one with a
// value other than the current.
func pickConfigOption(opts []configOption) (configOption, string) {
	best, bestScore := opts[0], -1
	for _, o := range opts {
		score := 0
		if len(o.Values) > 1 {
			score += 2
		}
		if o.Category == string(gen.SessionConfigOptionCategoryMode) {
			score++
		}
		if score > bestScore {
			best, bestScore = o, score
		}
	}
	value := best.Values[0]
	for _, v := range best.Values {
		if v != best.CurrentValue {
			value = v
			break
		}
	}
	return best, value
}

func checkSetConfigOption(ctx context.Context, s *Session) error {
	if _, err := s.Initialize(ctx); err != nil {
		return prereq(err)
	}
	setup, err := s.CreateSession(ctx)
	if err != nil {
		return prereq(err)
	}
	opts := selectOptions(setup.ConfigOptions)
	if len(opts) == 0 {
		return Skipf("agent does not advertise %s (session/new answered no select option with values)", GateConfigOptions)
	}
	opt, value := pickConfigOption(opts)
	set := func(configID, value string) (*Message, error) {
		m, err := s.Call(ctx, gen.MethodSessionSetConfigOption, map[string]any{"sessionId": setup.ID, "configId": configID, "value": value})
		if err != nil {
			return nil, Failf("session/set_config_option %q = %q: %v", configID, value, err)
		}
		return m, nil
	}
	m, err := set(opt.ID, value)
	if err != nil {
		return err
	}
	if m.Error != nil {
		return Failf("session/set_config_option %q = %q, an advertised value, answered %v", opt.ID, value, m.Error)
	}
	var r struct {
		ConfigOptions []json.RawMessage `json:"configOptions"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil || r.ConfigOptions == nil {
		return Failf("session/set_config_option answered %s, want the full configOptions (required)", describe(m))
	}
	i := slices.IndexFunc(selectOptions(r.ConfigOptions), func(o configOption) bool { return o.ID == opt.ID })
	if i < 0 {
		return Failf("session/set_config_option's configOptions no longer hold option %q", opt.ID)
	}
	if got := selectOptions(r.ConfigOptions)[i].CurrentValue; got != value {
		return Failf("after session/set_config_option %q = %q, its configOptions give currentValue %q", opt.ID, value, got)
	}
	for _, probe := range []struct{ id, value, what string }{
		{UnknownConfigID, value, "an option the agent did not advertise"},
		{opt.ID, UnknownConfigValue, fmt.Sprintf("a value option %q does not offer", opt.ID)},
	} {
		m, err := set(probe.id, probe.value)
		if err != nil {
			return err
		}
		if m.Error == nil {
			return Failf("session/set_config_option %q = %q, %s, answered %s, want an error", probe.id, probe.value, probe.what, describe(m))
		}
	}
	return nil
}
