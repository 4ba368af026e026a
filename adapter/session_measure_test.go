package adapter

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/internal/measure/claude"
	"acpkit.dev/adapter/internal/measure/codex"
	"acpkit.dev/adapter/internal/measure/gemini"
)

// startRecorder is a launch script in front of the reference agent: each
// start appends "<n> <pid> <outfile|none> <log-prompts|none> <previous
// outfile's directory gone: yes|no>" to starts and reports the n-th line
// of names as agentInfo.name ("-" omits agentInfo). Its file name decides
// whether the Gemini source claims it: "gemini" is claimed, a wrapper is
// not.
type startRecorder struct {
	t     *testing.T
	state string
	cmd   string
}

func newStartRecorder(t *testing.T, file string, names []string, refFlags ...string) *startRecorder {
	t.Helper()
	state := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(state, "names"), []byte(strings.Join(names, "\n")+"\n"), 0o600))
	script := `#!/bin/sh
state=` + state + `
n=$(( $(cat "$state/count" 2>/dev/null || echo 0) + 1 ))
echo $n > "$state/count"
prev=$(tail -n 1 "$state/outfiles" 2>/dev/null)
gone=yes
if [ -n "$prev" ] && [ -e "$(dirname "$prev")" ]; then gone=no; fi
echo "$n $$ ${GEMINI_TELEMETRY_OUTFILE:-none} ${GEMINI_TELEMETRY_LOG_PROMPTS:-none} $gone" >> "$state/starts"
if [ -n "$GEMINI_TELEMETRY_OUTFILE" ]; then echo "$GEMINI_TELEMETRY_OUTFILE" >> "$state/outfiles"; fi
name=$(sed -n "${n}p" "$state/names")
if [ "$name" = "-" ]; then exec ` + refagent(t) + ` --no-agent-info "$@"; fi
exec ` + refagent(t) + ` --agent-name "$name" "$@"
`
	path := filepath.Join(t.TempDir(), file)
	require.NoError(t, os.WriteFile(path, []byte(script), 0o700))
	return &startRecorder{t: t, state: state, cmd: strings.Join(append([]string{path}, refFlags...), " ")}
}

// starts returns the fields of every start's line.
func (r *startRecorder) starts() [][]string {
	r.t.Helper()
	data, err := os.ReadFile(filepath.Join(r.state, "starts"))
	require.NoError(r.t, err)
	var out [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		out = append(out, strings.Fields(l))
	}
	return out
}

func (h *harness) startCommand(cmd string) Session {
	p := h.params()
	p.Agent.Command = cmd
	return h.startWith(p)
}

func TestRS1_RS3_ClaimedAndConfirmedStartsOnceWithFourAssignments(t *testing.T) {
	h := newHarness(t)
	rec := newStartRecorder(t, "gemini", []string{gemini.RuntimeName})
	s := h.startCommand(rec.cmd)
	starts := rec.starts()
	require.Len(t, starts, 1, "no restart")
	outfile := starts[0][2]
	assert.True(t, strings.HasPrefix(filepath.Base(filepath.Dir(outfile)), "sortie-usage-"))
	assert.Equal(t, "false", starts[0][3], "GEMINI_TELEMETRY_LOG_PROMPTS=false")
	assert.DirExists(t, filepath.Dir(outfile), "the confirmed source's directory lives with the session")
	assert.Empty(t, h.log.find(logRelaunchedForMeasurement))
	assert.Empty(t, h.log.find(logRelaunchedWithoutForeign))
	_, _, ev := h.turn(s, "hello")
	assert.Equal(t, "this session started with a declared capability gap in: session continuation", ev.texts()[0],
		"CAP-2, RS-11: token counts delivered")
	h.stop(s)
	assert.NoDirExists(t, filepath.Dir(outfile), "RS-8: removed when the session ends")
}

func TestHS6_RS2_RS4_RS8_RS9_LOG2_ClaimedRuntimeReportingAnotherNameRestartsWithoutTheSource(t *testing.T) {
	h := newHarness(t)
	rec := newStartRecorder(t, "gemini", []string{"other-agent", "other-agent"})
	s := h.startCommand(rec.cmd)
	starts := rec.starts()
	require.Len(t, starts, 2)
	assert.NotEqual(t, "none", starts[0][2], "RS-1: the first start carries the claim")
	assert.Equal(t, "none", starts[1][2], "RS-4: the restart carries no source")
	assert.Equal(t, "yes", starts[1][4], "RS-8: the released directory is gone before the next start")
	recs := append(h.log.find(logRelaunchedWithoutForeign), h.log.find(logRelaunchedForMeasurement)...)
	require.Len(t, recs, 1, "RS-9: one record per restart")
	assert.Equal(t, logRelaunchedWithoutForeign, recs[0].Message)
	assert.Equal(t, "INFO", recs[0].Level.String())
	assert.Equal(t, "other-agent", recs[0].Attrs["name"])
	assert.Equal(t, componentAttr, recs[0].Attrs["component"])
	_, _, ev := h.turn(s, "hello")
	assert.Equal(t, "this session started with a declared capability gap in: token counts, session continuation", ev.texts()[0],
		"RS-11: a source turned away reads as unmeasured")
	assert.Equal(t, starts[1][1], s.AgentPID, "RS-10: the session's pid is the last start's")
	assert.Len(t, h.log.find(logAgentImplementation), 1, "RS-10: LOG-1 once")
}

func TestRS4_RS5_RS10_RS11_WrapperScriptRestartsWithTheRecognizer(t *testing.T) {
	h := newHarness(t)
	rec := newStartRecorder(t, "run-agent.sh", []string{gemini.RuntimeName, gemini.RuntimeName})
	s := h.startCommand(rec.cmd)
	starts := rec.starts()
	require.Len(t, starts, 2, "RS-10: the wrapper runs once per start")
	assert.Equal(t, "none", starts[0][2], "a wrapper is not claimed")
	assert.NotEqual(t, "none", starts[1][2], "RS-5: the final process carries the confirmed source")
	recs := h.log.find(logRelaunchedForMeasurement)
	require.Len(t, recs, 1)
	assert.Equal(t, gemini.RuntimeName, recs[0].Attrs["name"])
	assert.Empty(t, h.log.find(logRelaunchedWithoutForeign))
	_, _, ev := h.turn(s, "hello")
	assert.Equal(t, "this session started with a declared capability gap in: session continuation", ev.texts()[0])
	assert.Equal(t, starts[1][1], s.AgentPID)
	h.stop(s)
	assert.NoDirExists(t, filepath.Dir(starts[1][2]))
}

func TestRS6_AtMostThreeStarts(t *testing.T) {
	h := newHarness(t)
	// The recognizer's own relaunch disowns it: released, a third start
	// with no source, and never a fourth.
	rec := newStartRecorder(t, "run-agent.sh", []string{gemini.RuntimeName, "other-agent", gemini.RuntimeName, gemini.RuntimeName})
	s := h.startCommand(rec.cmd)
	starts := rec.starts()
	require.Len(t, starts, 3)
	assert.Equal(t, []string{"none", "x", "none"}, []string{starts[0][2], map[bool]string{true: "x", false: "none"}[starts[1][2] != "none"], starts[2][2]})
	assert.Equal(t, "yes", starts[2][4], "RS-8")
	assert.Len(t, h.log.find(logRelaunchedForMeasurement), 1)
	assert.Len(t, h.log.find(logRelaunchedWithoutForeign), 1)
	_, _, ev := h.turn(s, "hello")
	assert.Contains(t, ev.texts()[0], "token counts", "the third start is unmeasured")
}

func TestMS3_HandshakeWithoutAgentInfoConfirmsNothing(t *testing.T) {
	h := newHarness(t)
	rec := newStartRecorder(t, "gemini", []string{"-", "-"})
	h.startCommand(rec.cmd)
	require.Len(t, rec.starts(), 2)
	recs := h.log.find(logRelaunchedWithoutForeign)
	require.Len(t, recs, 1)
	assert.Empty(t, recs[0].Attrs["name"], "RS-9: empty when the response carried none")
}

func TestMS2_UnclaimedRuntimeOfAnotherNameStartsOnce(t *testing.T) {
	h := newHarness(t)
	rec := newStartRecorder(t, "run-agent.sh", []string{"other-agent"})
	h.startCommand(rec.cmd)
	require.Len(t, rec.starts(), 1, "RS-3: nothing claimed, no recognizer")
	assert.Equal(t, "none", rec.starts()[0][2])
}

func TestRS8_FailedStartReleasesEveryArmedSource(t *testing.T) {
	h := newHarness(t)
	rec := newStartRecorder(t, "gemini", []string{gemini.RuntimeName}, "--fail-initialize", "-32603")
	p := h.params()
	p.Agent.Command = rec.cmd
	_, err := h.a.StartSession(context.Background(), p)
	require.Error(t, err)
	starts := rec.starts()
	require.Len(t, starts, 1)
	assert.NoDirExists(t, filepath.Dir(starts[0][2]))
}

// confirmedSource is the name of the source the session's pump measures
// with, "" for none.
func confirmedSource(s Session) string {
	got := make(chan string)
	s.s.pump.post(pumpProbe(func(p *pump) {
		name := ""
		if p.source != nil {
			name = p.source.Name()
		}
		got <- name
	}))
	return <-got
}

// The three sources settle together (§8, MS-16): each is claimed by the
// command line naming its runtime and confirmed by its handshake name.
func TestRS3_MS16_EachSourceClaimedAndConfirmedStartsOnce(t *testing.T) {
	for file, want := range map[string]string{
		"gemini":           gemini.RuntimeName,
		"claude-agent-acp": claude.RuntimeName,
		"codex-acp":        codex.RuntimeName,
	} {
		t.Run(file, func(t *testing.T) {
			h := newHarness(t)
			rec := newStartRecorder(t, file, []string{want})
			s := h.startCommand(rec.cmd)
			require.Len(t, rec.starts(), 1, "no restart")
			assert.Empty(t, h.log.find(logRelaunchedForMeasurement))
			assert.Empty(t, h.log.find(logRelaunchedWithoutForeign))
			assert.Equal(t, map[string]string{"gemini": gemini.Name, "claude-agent-acp": claude.Name, "codex-acp": codex.Name}[file], confirmedSource(s))
			_, _, ev := h.turn(s, "hello")
			assert.Equal(t, "this session started with a declared capability gap in: session continuation", ev.texts()[0], "RS-11: token counts delivered")
		})
	}
}

func TestRS4_RS9_MS16_WrapperIsRestartedWithTheSourceItsHandshakeNames(t *testing.T) {
	for _, name := range []string{claude.RuntimeName, codex.RuntimeName} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			rec := newStartRecorder(t, "run-agent.sh", []string{name, name})
			s := h.startCommand(rec.cmd)
			require.Len(t, rec.starts(), 2, "RS-4: nothing claimed, a recognizer: one restart")
			recs := h.log.find(logRelaunchedForMeasurement)
			require.Len(t, recs, 1)
			assert.Equal(t, name, recs[0].Attrs["name"])
			assert.Equal(t, rec.starts()[1][1], s.AgentPID)
			assert.NotEmpty(t, confirmedSource(s))
			_, _, ev := h.turn(s, "hello")
			assert.Equal(t, "this session started with a declared capability gap in: session continuation", ev.texts()[0])
		})
	}
}

func TestRS2_RS4_RS5_MS16_OneSourcesClaimAnotherSourcesHandshake(t *testing.T) {
	// Claimed as Gemini CLI (its settings armed), answering as
	// claude-agent-acp: Gemini's claim is released and the restart
	// carries the recognizer, the claude source, and no Gemini setting.
	h := newHarness(t)
	rec := newStartRecorder(t, "gemini", []string{claude.RuntimeName, claude.RuntimeName})
	s := h.startCommand(rec.cmd)
	starts := rec.starts()
	require.Len(t, starts, 2)
	assert.NotEqual(t, "none", starts[0][2], "RS-1: the first start carried Gemini's claim")
	assert.Equal(t, "none", starts[1][2], "RS-5: the final process carries no other source's settings")
	assert.Equal(t, "yes", starts[1][4], "RS-8: the released directory is gone before the restart")
	require.Len(t, h.log.find(logRelaunchedForMeasurement), 1)
	assert.Equal(t, claude.Name, confirmedSource(s))

	// Claimed as codex-acp, answering as claude-agent-acp.
	h = newHarness(t)
	rec = newStartRecorder(t, "codex-acp", []string{claude.RuntimeName, claude.RuntimeName})
	s = h.startCommand(rec.cmd)
	require.Len(t, rec.starts(), 2)
	assert.Equal(t, claude.Name, confirmedSource(s))
}

func TestMS4_MS16_ClaimedButUnrecognisedRuntimeIsUnmeasured(t *testing.T) {
	h := newHarness(t)
	rec := newStartRecorder(t, "claude-agent-acp", []string{"other-agent", "other-agent"})
	s := h.startCommand(rec.cmd)
	require.Len(t, rec.starts(), 2, "RS-4: claimed and released, restarted with no source")
	assert.Len(t, h.log.find(logRelaunchedWithoutForeign), 1)
	assert.Empty(t, confirmedSource(s))
	_, _, ev := h.turn(s, "hello")
	assert.Equal(t, "this session started with a declared capability gap in: token counts, session continuation", ev.texts()[0])
}
