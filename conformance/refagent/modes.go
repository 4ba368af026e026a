package refagent

import (
	"context"
	"slices"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
)

// modeIDs are the modes --modes offers: plain words, or URLs with
// --mode-ids-url (mode ids are opaque strings; Copilot CLI's are URLs).
func (a *Agent) modeIDs() []string {
	if a.opts.ModeIDsURL {
		return []string{"https://acpkit.dev/refagent/modes#ask", "https://acpkit.dev/refagent/modes#code"}
	}
	return []string{"ask", "code"}
}

// effortValues are the values of the effort option --config-options
// offers.
var effortValues = []string{"low", "high"}

// effortOption is the id of that option.
const effortOption = "effort"

func (a *Agent) modeOf(s *Session) string {
	if s.Mode == "" {
		return a.modeIDs()[0]
	}
	return s.Mode
}

// modeState is session/new's modes (nil without --modes).
func (a *Agent) modeState(s *Session) *gen.SessionModeState {
	if !a.opts.Modes {
		return nil
	}
	st := &gen.SessionModeState{CurrentModeID: gen.SessionModeID(a.modeOf(s))}
	for i, id := range a.modeIDs() {
		st.AvailableModes = append(st.AvailableModes, gen.SessionMode{ID: gen.SessionModeID(id), Name: []string{"Ask", "Code"}[i]})
	}
	return st
}

// configOptions is the session's options (nil without --config-options).
func (a *Agent) configOptions(s *Session) []gen.SessionConfigOption {
	if !a.opts.ConfigOptions {
		return nil
	}
	current := s.Effort
	if current == "" {
		current = effortValues[0]
	}
	values := gen.SessionConfigSelectOptionsUngrouped{}
	for _, v := range effortValues {
		values = append(values, gen.SessionConfigSelectOption{Value: gen.SessionConfigValueID(v), Name: v})
	}
	category := gen.SessionConfigOptionCategoryThoughtLevel
	return []gen.SessionConfigOption{{
		ID: effortOption, Name: "Effort", Category: &category,
		Type: &gen.SessionConfigOptionTypeSelect{CurrentValue: gen.SessionConfigValueID(current), Options: values},
	}}
}

// knownSession is the session sid, or -32002.
func (a *Agent) knownSession(sid gen.SessionID) (*Session, error) {
	s, ok := a.store.get(string(sid))
	if !ok {
		return nil, errorf(acpsdk.CodeResourceNotFound, "session not found: %s", sid)
	}
	return s, nil
}

// SetSessionMode switches an advertised mode and confirms it with a
// current_mode_update; an unknown mode is -32602.
func (ta *typedAgent) SetSessionMode(ctx context.Context, p *gen.SetSessionModeRequest) (*gen.SetSessionModeResponse, error) {
	a := (*Agent)(ta)
	if !a.opts.Modes {
		return nil, a.notImplemented(gen.MethodSessionSetMode)
	}
	s, err := a.knownSession(p.SessionID)
	if err != nil {
		return nil, err
	}
	mode := string(p.ModeID)
	switch {
	case !slices.Contains(a.modeIDs(), mode) && !a.opts.SetModeAcceptsUnknown:
		return nil, errorf(acpsdk.CodeInvalidParams, "unknown mode: %s", mode)
	case a.opts.SetModeError:
		return nil, errorf(acpsdk.CodeInternalError, "refagent: failing session/set_mode on request")
	}
	if _, err := a.store.update(s, func(s *Session) { s.Mode = mode }); err != nil {
		return nil, errorf(acpsdk.CodeInternalError, "saving the mode: %v", err)
	}
	var confirm map[string]any
	switch {
	case a.opts.SilentSetMode:
	case a.opts.ModeUpdateAsConfig:
		var values []any
		for _, id := range a.modeIDs() {
			values = append(values, map[string]any{"value": id, "name": id})
		}
		confirm = map[string]any{"sessionUpdate": gen.SessionUpdateConfigOptionUpdateTag, "configOptions": []any{map[string]any{
			"id": "mode", "name": "Mode", "category": "mode", "type": "select", "currentValue": mode, "options": values,
		}}}
	default:
		confirm = map[string]any{"sessionUpdate": gen.SessionUpdateCurrentModeUpdateTag, "currentModeId": mode}
	}
	if confirm != nil {
		if err := a.t.write(ctx, update(s.ID, confirm)); err != nil {
			return nil, err
		}
	}
	return &gen.SetSessionModeResponse{}, nil
}

// SetSessionConfigOption sets the effort option to an offered value and
// answers every option with its current value; an unknown option or value
// is -32602.
func (ta *typedAgent) SetSessionConfigOption(_ context.Context, p *gen.SetSessionConfigOptionRequest) (*gen.SetSessionConfigOptionResponse, error) {
	a := (*Agent)(ta)
	if !a.opts.ConfigOptions {
		return nil, a.notImplemented(gen.MethodSessionSetConfigOption)
	}
	s, err := a.knownSession(p.SessionID)
	if err != nil {
		return nil, err
	}
	v, ok := p.Type.(*gen.SetSessionConfigOptionRequestTypeValueID)
	if !ok {
		return nil, errorf(acpsdk.CodeInvalidParams, "option %s takes a value id", p.ConfigID)
	}
	value := string(v.Value)
	if !a.opts.SetConfigAcceptsUnknown {
		if p.ConfigID != effortOption {
			return nil, errorf(acpsdk.CodeInvalidParams, "unknown configuration option: %s", p.ConfigID)
		}
		if !slices.Contains(effortValues, value) {
			return nil, errorf(acpsdk.CodeInvalidParams, "option %s has no value %s", p.ConfigID, value)
		}
	}
	now, err := a.store.update(s, func(s *Session) {
		if p.ConfigID == effortOption && !a.opts.SetConfigStale {
			s.Effort = value
		}
	})
	if err != nil {
		return nil, errorf(acpsdk.CodeInternalError, "saving the option: %v", err)
	}
	return &gen.SetSessionConfigOptionResponse{ConfigOptions: a.configOptions(&now)}, nil
}
