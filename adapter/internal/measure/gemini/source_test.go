package gemini

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"acpkit.dev/adapter/internal/measure"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The fixtures are real files Gemini CLI 0.61.0 wrote against the fake
// Gemini API (acpkit.dev/internal/fakemodel): one process ran session S1
// (a tool-call turn, then a plain turn) and session S2 in the same
// telemetry outfile; a second process loaded S1 in a later minute and ran
// one more turn, which left two journal files starting with S1's id. The
// telemetry file is trimmed: the gen_ai.* restatements after the first and
// the large spans are left out, everything else is as written.
const (
	fixtureTelemetry = "testdata/telemetry.json"
	fixtureHome      = "testdata/home"
	sessionS1        = "6d0f99cd-aad3-439d-b260-b435de1af748"
	sessionS2        = "22f3baa1-121e-42c4-ba9c-cc690409188b"
	// startupID is the resource-level session.id of every record.
	startupID = "bb7c4a3f-96c7-427f-8079-3d66fb128e16"
	mainModel = "gemini-3.8-flash"
)

// S1's records in the fixture: router 50/7, main 200/20 (+4 thoughts),
// main 103/10 (5 cached, 3 thoughts), router 50/7, main 105/10 (5, 3).
var s1Usage = measure.Usage{Input: 508, Output: 64, Total: 572, CacheRead: 10}

const s1Basis = 508 + 54

func TestGEM5_GEM6_TelemetryCountsOnlyTheSessionsAPIResponses(t *testing.T) {
	data, err := os.ReadFile(fixtureTelemetry)
	require.NoError(t, err)
	// The three writers interleave: span and metric values sit between
	// log records, and the reader steps over them.
	lastLog := bytes.LastIndex(data, []byte(`"event.name"`))
	assert.Less(t, bytes.Index(data, []byte(`"_spanContext"`)), lastLog, "a span before a later log record")
	assert.Positive(t, bytes.Index(data, []byte(`"scopeMetrics"`)), "a metrics value")

	var s1, s2, startup tally
	end := readTelemetry(fixtureTelemetry, 0, sessionS1, &s1)
	fi, err := os.Stat(fixtureTelemetry)
	require.NoError(t, err)
	assert.Equal(t, fi.Size()-1, end, "GEM-4: the position ends past the last whole value (its newline is not read)")
	readTelemetry(fixtureTelemetry, 0, sessionS2, &s2)
	readTelemetry(fixtureTelemetry, 0, startupID, &startup)

	assert.Equal(t, 5, s1.records, "records of every role count, the router's too")
	assert.Equal(t, s1Usage, s1.usage(), "GEM-6: thoughts are output, cache-read is a subset of input")
	assert.Equal(t, int64(s1Basis), s1.basis(), "GEM-6: the basis leaves thoughts out")
	assert.Equal(t, mainModel, s1.model())

	assert.Equal(t, 2, s2.records, "another session's records are its own")
	assert.Equal(t, measure.Usage{Input: 157, Output: 20, Total: 177, CacheRead: 5}, s2.usage())
	assert.Zero(t, startup.records, "the resource's session.id is a start-up id and never matches")
}

func TestGEM5_ModelOfRecordIsTheLastMainOne(t *testing.T) {
	var tl tally
	tl.add(1, 1, 0, 0, "main-a", "main")
	tl.add(1, 1, 0, 0, "router-b", "utility_router")
	assert.Equal(t, "main-a", tl.model(), "a later utility record does not name the model")
	var only tally
	only.add(1, 1, 0, 0, "router-b", "utility_router")
	only.add(1, 1, 0, 0, "", "utility_router")
	assert.Equal(t, "router-b", only.model(), "no main record: the last non-empty model")
}

func TestGEM5_RecordWithoutEveryCounterIsNotCounted(t *testing.T) {
	data, err := os.ReadFile(fixtureTelemetry)
	require.NoError(t, err)
	// drop one counter from every record.
	cut := bytes.ReplaceAll(data, []byte(`"thoughts_token_count"`), []byte(`"thoughts_dropped"`))
	path := filepath.Join(t.TempDir(), "telemetry.json")
	require.NoError(t, os.WriteFile(path, cut, 0o600))
	var tl tally
	readTelemetry(path, 0, sessionS1, &tl)
	assert.Zero(t, tl.records)
}

func TestGEM4_HalfWrittenValueIsReadWholeNextTime(t *testing.T) {
	data, err := os.ReadFile(fixtureTelemetry)
	require.NoError(t, err)
	// Cut inside S1's last main record, as the CLI's writer can be seen.
	last := bytes.LastIndex(data, []byte(`"input_token_count": 105`))
	require.Positive(t, last)
	path := filepath.Join(t.TempDir(), "telemetry.json")
	require.NoError(t, os.WriteFile(path, data[:last], 0o600))

	var tl tally
	pos := readTelemetry(path, 0, sessionS1, &tl)
	assert.Equal(t, 4, tl.records, "the half-written record is not counted")
	assert.Less(t, pos, int64(last), "the position stops before the half-written value")
	assert.Equal(t, pos, readTelemetry(path, pos, sessionS1, &tl), "nothing new: the position holds")

	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(data[last:])
	require.NoError(t, err)
	require.NoError(t, f.Close())
	readTelemetry(path, pos, sessionS1, &tl)
	assert.Equal(t, 5, tl.records)
	assert.Equal(t, s1Usage, tl.usage(), "counted once, whole")
}

func TestGEM4_OneDrainReadsAtMost64MiBPastThePosition(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 66 MiB file")
	}
	data, err := os.ReadFile(fixtureTelemetry)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "telemetry.json")
	f, err := os.Create(path)
	require.NoError(t, err)
	// 66 one-MiB values a reader must step over, then the real records.
	pad := []byte(`{"attributes":{"event.name":"pad","pad":"` + strings.Repeat("x", 1<<20) + `"}}` + "\n")
	for range 66 {
		_, err = f.Write(pad)
		require.NoError(t, err)
	}
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	var tl tally
	pos := readTelemetry(path, 0, sessionS1, &tl)
	assert.LessOrEqual(t, pos, int64(readBound), "the first read stops inside the bound")
	assert.Positive(t, pos, "and still advances: a large file is never skipped")
	assert.Zero(t, tl.records)
	end := readTelemetry(path, pos, sessionS1, &tl)
	assert.Greater(t, end, pos, "the next drain continues from the saved position")
	assert.Equal(t, 5, tl.records, "and reads the records past it")
	assert.Equal(t, s1Usage, tl.usage())
}

func TestGEM8_JournalUnionAfterLoadSkipsInheritedIDs(t *testing.T) {
	all := readJournal(fixtureHome, sessionS1, nil)
	// Both files starting with S1's id are read; a message appears once.
	assert.Equal(t, 4, all.t.records, "the four gemini messages of S1, each once")
	assert.Equal(t, measure.Usage{Input: 517, Output: 63, Total: 580, CacheRead: 15}, all.t.usage())
	assert.Equal(t, mainModel, all.t.model())

	inherited := map[string]bool{}
	for id := range readJournalAt(t, "testdata/home/.gemini/tmp/ws/chats/session-2026-12-01T09-57-6d0f99cd.jsonl", 19) {
		inherited[id] = true
	}
	after := readJournal(fixtureHome, sessionS1, inherited)
	assert.Equal(t, 1, after.t.records, "GEM-3: only the turn after the load is this run's")
	assert.Equal(t, measure.Usage{Input: 109, Output: 13, Total: 122, CacheRead: 5}, after.t.usage())

	other := readJournal(fixtureHome, sessionS2, nil)
	assert.Equal(t, 1, other.t.records)
	assert.Zero(t, readJournal(fixtureHome, "no-such-session", nil).t.records)
}

// readJournalAt returns the message ids of path's first n lines: what the
// journal held before the load's process wrote to it.
func readJournalAt(t *testing.T, path string, n int) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	require.Greater(t, len(lines), n)
	home := t.TempDir()
	dir := filepath.Join(home, ".gemini", "tmp", "ws", "chats")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(path)), []byte(strings.Join(lines[:n], "")), 0o600))
	return readJournal(home, sessionS1, nil).ids
}

func TestGEM8_JournalBoundsSkipOverlongLinesAndFiles(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".gemini", "tmp", "p", "chats")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	long := `{"id":"big","tokens":{"input":1000,"output":1,"cached":0,"thoughts":0},"pad":"` + strings.Repeat("y", journalLineBound) + `"}`
	body := `{"sessionId":"s"}` + "\n" + long + "\n" + `{"id":"ok","tokens":{"input":3,"output":2,"cached":1,"thoughts":0}}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "session-a.jsonl"), []byte(body), 0o600))
	j := readJournal(home, "s", nil)
	assert.Equal(t, 1, j.t.records, "a line over 10 MiB is skipped, the next one read")
	assert.Equal(t, int64(5), j.t.basis())
}

func TestGEM2_ClaimArmsFourVariablesInAPrivateDirectory(t *testing.T) {
	s := New()
	ok, err := s.Claim(measure.Launch{Program: "gemini", Args: []string{"--acp"}})
	require.NoError(t, err)
	require.True(t, ok)
	dir := s.Dir()
	assert.True(t, strings.HasPrefix(filepath.Base(dir), "sortie-usage-"))
	assert.DirExists(t, dir)
	assert.Equal(t, []string{
		"GEMINI_TELEMETRY_ENABLED=true",
		"GEMINI_TELEMETRY_TARGET=local",
		"GEMINI_TELEMETRY_OUTFILE=" + filepath.Join(dir, "telemetry.json"),
		"GEMINI_TELEMETRY_LOG_PROMPTS=false",
	}, s.Env())
	require.NoError(t, s.Close())
	assert.NoDirExists(t, dir)
	require.NoError(t, s.Close(), "idempotent")
	assert.Empty(t, s.Env())
	require.NoError(t, New().Close(), "safe on a source that never claimed")
}

func TestMS2_ClaimRuleNamesTheRuntime(t *testing.T) {
	claims := map[string]bool{
		"gemini --acp":                                true,
		"/usr/local/bin/gemini --acp":                 true,
		`C:\npm\GEMINI.CMD --acp`:                     true,
		"node /x/node_modules/.bin/gemini.js --acp":   true,
		"npx @google/gemini-cli --acp":                true,
		"npx -y @google/gemini-cli@0.61.0 --acp":      true,
		"gemini.exe.bak --acp":                        false,
		"./run-gemini.sh":                             false, // a wrapper: the handshake decides (RS-4)
		"geminix --acp":                               false,
		"npx @google/gemini-cli-core":                 false,
		"refagent --agent-name gemini-cli":            false,
		"/opt/gemini/bin/agent --acp":                 false,
		"node /x/gemini/dist/index.js --experimental": false,
	}
	for cmd, want := range claims {
		f := strings.Fields(cmd)
		s := New()
		ok, err := s.Claim(measure.Launch{Program: f[0], Args: f[1:]})
		require.NoError(t, err)
		assert.Equal(t, want, ok, cmd)
		if !want {
			assert.Empty(t, s.Dir(), "MS-2: a refusal creates nothing")
		}
		require.NoError(t, s.Close())
	}
}

func TestRS7_RemoteLaunchIsNeverClaimed(t *testing.T) {
	s := New()
	ok, err := s.Claim(measure.Launch{Program: "gemini", Args: []string{"--acp"}, Remote: true})
	require.NoError(t, err)
	assert.False(t, ok)
	ok, _ = s.Claim(measure.Launch{Program: "wrapper", Remote: true, RuntimeName: RuntimeName})
	assert.False(t, ok)
	assert.Empty(t, s.Dir())
}

func TestRS4_RelaunchOfferIsClaimedByRecognition(t *testing.T) {
	s := New()
	ok, err := s.Claim(measure.Launch{Program: "./wrapper.sh", RuntimeName: "other"})
	require.NoError(t, err)
	assert.False(t, ok)
	ok, err = s.Claim(measure.Launch{Program: "./wrapper.sh", RuntimeName: RuntimeName})
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Len(t, s.Env(), 4)
	require.NoError(t, s.Close())
}

func TestGEM1_RecognisesGeminiCLIWhateverTheVersion(t *testing.T) {
	s := New()
	assert.True(t, s.Recognize("gemini-cli"))
	assert.False(t, s.Recognize("gemini"))
	assert.False(t, s.Recognize(""))
	assert.False(t, s.Recognize("claude-code"))
}

// drainSource is a claimed, opened source whose journal home is home and
// whose poll is shortened.
func drainSource(t *testing.T, home, sessionID string) *Source {
	t.Helper()
	s := New()
	s.getenv = func(k string) string {
		if k == "GEMINI_CLI_HOME" {
			return home
		}
		return ""
	}
	s.pollEvery, s.pollFor = time.Millisecond, 20*time.Millisecond
	ok, err := s.Claim(measure.Launch{Program: "gemini"})
	require.NoError(t, err)
	require.True(t, ok)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), "telemetry.json"), []byte("{\"before\":1}\n"), 0o600))
	require.NoError(t, s.Open(sessionID))
	return s
}

func appendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	require.NoError(t, err)
	_, err = f.Write(b)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func fixture(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(fixtureTelemetry)
	require.NoError(t, err)
	return data
}

func TestGEM7_DrainStopsEarlyOnceTheBasisCoversTheBound(t *testing.T) {
	s := drainSource(t, t.TempDir(), sessionS1)
	s.pollFor = time.Hour // only the early stop can end this drain
	appendFile(t, filepath.Join(s.Dir(), "telemetry.json"), fixture(t))
	f, ok := s.Drain(context.Background(), 333)
	require.True(t, ok)
	assert.Equal(t, measure.Figure{Usage: s1Usage, Model: mainModel, Origin: "telemetry", Grade: measure.GradeAccounted}, f)
}

func TestGEM3_OpenStartsAtTheOutfilesCurrentSize(t *testing.T) {
	s := New()
	s.getenv = func(string) string { return t.TempDir() }
	_, err := s.Claim(measure.Launch{Program: "gemini"})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), "telemetry.json"), fixture(t), 0o600))
	require.NoError(t, s.Open(sessionS1))
	s.pollEvery, s.pollFor = time.Millisecond, 5*time.Millisecond
	_, ok := s.Drain(context.Background(), 10)
	assert.False(t, ok, "records written before Open are not this session's run")
}

func TestGEM3_OpenRemembersInheritedJournalIDs(t *testing.T) {
	s := drainSource(t, fixtureHome, sessionS1)
	assert.Len(t, s.inherited, 9, "every message id already in S1's journal")
	_, ok := s.Drain(context.Background(), 100)
	assert.False(t, ok, "a resumed history is never charged to this run")
}

func TestGEM8_JournalFallbackAfterTheDeadline(t *testing.T) {
	home := t.TempDir()
	s := drainSource(t, home, sessionS1)
	src := "testdata/home/.gemini/tmp/ws/chats/"
	dir := filepath.Join(home, ".gemini", "tmp", "ws", "chats")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	for _, n := range []string{"session-2026-12-01T09-57-6d0f99cd.jsonl", "session-2026-12-01T09-59-6d0f99cd.jsonl"} {
		b, err := os.ReadFile(src + n)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), b, 0o600))
	}
	f, ok := s.Drain(context.Background(), 100)
	require.True(t, ok)
	assert.Equal(t, "journal", f.Origin, "GEM-9: telemetry had nothing")
	assert.Equal(t, measure.Usage{Input: 517, Output: 63, Total: 580, CacheRead: 15}, f.Usage)
	assert.Equal(t, measure.GradeAccounted, f.Grade)
	assert.Equal(t, mainModel, f.Model)
}

func TestGEM9_TheLargerBasisWinsAndSourcesAreNeverSummed(t *testing.T) {
	home := t.TempDir()
	s := drainSource(t, home, sessionS1)
	// Telemetry shows only the first main call; the journal shows more.
	data := fixture(t)
	cut := bytes.Index(data, []byte(`"input_token_count": 103`))
	appendFile(t, filepath.Join(s.Dir(), "telemetry.json"), data[:cut])
	dir := filepath.Join(home, ".gemini", "tmp", "ws", "chats")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	b, err := os.ReadFile("testdata/home/.gemini/tmp/ws/chats/session-2026-12-01T09-57-6d0f99cd.jsonl")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "session-x.jsonl"), b, 0o600))
	f, ok := s.Drain(context.Background(), 1000)
	require.True(t, ok)
	assert.Equal(t, "journal", f.Origin)
	assert.Equal(t, int64(517), f.Usage.Input, "the journal's figure alone")
}

func TestGEM10_ZeroRecordsCannotProveAPositiveBound(t *testing.T) {
	s := drainSource(t, t.TempDir(), sessionS1)
	zero := bytes.NewBuffer(nil)
	fmt.Fprintf(zero, `{"attributes":{"event.name":"gemini_cli.api_response","session.id":%q,"model":"m","role":"main","input_token_count":0,"output_token_count":0,"cached_content_token_count":0,"thoughts_token_count":0}}`+"\n", sessionS1)
	appendFile(t, filepath.Join(s.Dir(), "telemetry.json"), zero.Bytes())
	_, ok := s.Drain(context.Background(), 10)
	assert.False(t, ok, "a zero block against a positive bound is not measured")

	appendFile(t, filepath.Join(s.Dir(), "telemetry.json"), zero.Bytes())
	f, ok := s.Drain(context.Background(), 0)
	require.True(t, ok, "with no bound, records that exist are a measurement")
	assert.Equal(t, measure.GradeUnknown, f.Grade, "GEM-11: bound <= 0 grades unknown")
}

func TestGEM11_PartialCarriesForwardAndNeverMovesBackwards(t *testing.T) {
	s := drainSource(t, t.TempDir(), sessionS1)
	out := filepath.Join(s.Dir(), "telemetry.json")
	data := fixture(t)
	cut := bytes.Index(data, []byte(`"input_token_count": 103`))
	appendFile(t, out, data[:cut]) // router 50/7 + main 200/20: basis 277
	f, ok := s.Drain(context.Background(), 300)
	require.True(t, ok)
	assert.Equal(t, measure.GradePartial, f.Grade)
	assert.Equal(t, int64(23), s.acct.Carry(), "300 - 277 is left for the next turn")

	appendFile(t, out, data[cut:]) // the rest: basis 562, advance 285
	f, ok = s.Drain(context.Background(), 250)
	require.True(t, ok)
	assert.Equal(t, measure.GradeAccounted, f.Grade, "285 covers 250 + 23")
	assert.Equal(t, s1Usage, f.Usage)
	assert.Zero(t, s.acct.Carry())

	f, ok = s.Drain(context.Background(), 0)
	assert.False(t, ok, "nothing new")
	assert.Equal(t, measure.Figure{}, f)
	assert.Equal(t, s1Usage, s.acct.Last(), "GEM-11: the reported figure never moves backwards")
}

func TestGEM7_CancelDuringPollIsNothing(t *testing.T) {
	s := drainSource(t, t.TempDir(), sessionS1)
	s.pollFor = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, ok := s.Drain(ctx, 10)
	assert.False(t, ok)
}

func TestGEM12_FigureIsRunCumulativeSinceOpen(t *testing.T) {
	s := drainSource(t, t.TempDir(), sessionS1)
	out := filepath.Join(s.Dir(), "telemetry.json")
	data := fixture(t)
	cut := bytes.Index(data, []byte(`"input_token_count": 103`))
	appendFile(t, out, data[:cut])
	f1, ok := s.Drain(context.Background(), 200)
	require.True(t, ok)
	appendFile(t, out, data[cut:])
	f2, ok := s.Drain(context.Background(), 100)
	require.True(t, ok)
	assert.Equal(t, measure.Usage{Input: 250, Output: 31, Total: 281}, f1.Usage)
	assert.Equal(t, s1Usage, f2.Usage, "the second figure includes the first")
}
