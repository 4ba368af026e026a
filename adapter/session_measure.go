package adapter

import (
	"strings"

	"acpkit.dev/adapter/internal/measure"
	"acpkit.dev/adapter/internal/measure/claude"
	"acpkit.dev/adapter/internal/measure/codex"
	"acpkit.dev/adapter/internal/measure/gemini"
)

// maxStarts bounds the starts of one session start (RS-6).
const maxStarts = 3

// The two restart records of RS-9.
const (
	logRelaunchedForMeasurement = "agent relaunched for measurement"
	logRelaunchedWithoutForeign = "agent relaunched without foreign usage settings"
)

// defaultSources is the registry every adapter starts with: the sources
// that ship, Gemini CLI (MS-1) and claude-agent-acp and codex-acp (MS-16),
// in claim order.
func defaultSources() *measure.Registry {
	var r measure.Registry
	_ = r.Register(gemini.Name, gemini.Factory)
	_ = r.Register(claude.Name, claude.Factory)
	_ = r.Register(codex.Name, codex.Factory)
	return &r
}

// armed is the measurement state of one session start: every source of
// the registry, which of them the current start carries, which were ever
// carried, and whether a recognizer restart already happened.
type armed struct {
	sources    []measure.Source
	carried    []bool
	tried      []bool
	recognized bool
	// launch is the local launch offered, for a relaunch offer too.
	launch measure.Launch
}

// claimAll is MS-2's first offer of the command run in workspace; a remote
// launch is offered to nobody.
func claimAll(sources []measure.Source, command, workspace string, remote bool) *armed {
	m := &armed{sources: sources, carried: make([]bool, len(sources)), tried: make([]bool, len(sources))}
	tok := strings.Fields(command)
	if remote || len(tok) == 0 {
		return m // MS-2, RS-7
	}
	l := measure.Launch{Program: tok[0], Args: tok[1:], Dir: workspace}
	m.launch = l
	for i, src := range sources {
		// A claim that could not be armed leaves its source out: the
		// session runs unmeasured rather than failing its start.
		ok, err := src.Claim(l)
		if err != nil {
			_ = src.Close()
			ok = false
		}
		m.carried[i], m.tried[i] = ok, ok
	}
	return m
}

// env is the assignments of every carried source, in claim order (RS-1).
func (m *armed) env() []string {
	var env []string
	for i, src := range m.sources {
		if m.carried[i] {
			env = append(env, src.Env()...)
		}
	}
	return env
}

// settlement is RS-2's verdict on one start's handshake.
type settlement struct {
	confirmed measure.Source
	// restart: stop this start and run the command again (RS-4); log is
	// the restart record's message.
	restart bool
	log     string
	// released are the sources this start carried and the next one will
	// not; the caller closes them once this start is stopped (RS-8).
	released []measure.Source
}

// settle applies RS-2..RS-4 to the runtime name the handshake reported; a
// recognizer is claimed with that name. last forbids a restart (RS-6).
func (m *armed) settle(name string, remote, last bool) settlement {
	var st settlement
	carriedAny := false
	for i, src := range m.sources {
		if !m.carried[i] {
			continue
		}
		carriedAny = true
		if st.confirmed == nil && name != "" && src.Recognize(name) {
			st.confirmed = src // MS-3: the first in claim order
			continue
		}
		m.carried[i] = false
		st.released = append(st.released, src)
	}
	if st.confirmed != nil && len(st.released) == 0 {
		return st // RS-3
	}
	recognizer := -1
	// RS-6: a recognizer gets one relaunch; when its own handshake disowns
	// it the next start runs with no source.
	if st.confirmed == nil && name != "" && !remote && !m.recognized {
		for i, src := range m.sources {
			if !m.tried[i] && src.Recognize(name) {
				recognizer = i
				break
			}
		}
	}
	if (!carriedAny && recognizer < 0) || last {
		return st // RS-3, or RS-6's cap
	}
	st.restart, st.log = true, logRelaunchedWithoutForeign
	if recognizer >= 0 {
		m.recognized, m.tried[recognizer] = true, true
		l := m.launch
		l.RuntimeName = name
		ok, err := m.sources[recognizer].Claim(l)
		if ok && err == nil {
			m.carried[recognizer] = true
			st.log = logRelaunchedForMeasurement
		}
	}
	return st
}

// releaseAll closes every source (RS-8: a failed start releases
// everything armed).
func (m *armed) releaseAll() {
	if m == nil {
		return
	}
	for i, src := range m.sources {
		m.carried[i] = false
		_ = src.Close()
	}
}
