//go:build linux

package check_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/conformance/check"
	"acpkit.dev/internal/fakemodel"
	"acpkit.dev/internal/realruntime"
)

// updateRuntimeTable rewrites the runtime table of conformance/README.md
// from the gradings of TestStandard_RealRuntimes.
var updateRuntimeTable = flag.Bool("update-runtime-table", false, "rewrite conformance/README.md's runtime table from this run")

// acpcheckScript is the model behind acpcheck's prompts for the runtime:
// the cancel prompt gets a slow stream (so there is a turn to cancel); the
// tool and permission prompts a call of the runtime's write tool creating
// never, which it asks permission for (refused: never is not created);
// everything else, and every request reporting a tool's result, a short
// answer. A prompt is read from the conversation's last user text, so a
// later turn, whose request repeats the earlier prompts, is answered for
// its own.
func acpcheckScript(spec realruntime.Spec, never string) fakemodel.Script {
	return func(r fakemodel.Request) fakemodel.Reply {
		if !r.OffersTools() || r.EndsWithToolResult() {
			return fakemodel.Reply{Text: "One short sentence."}
		}
		last := r.LastUserText()
		switch {
		case strings.Contains(last, check.CancelPrompt):
			return fakemodel.Reply{Text: "1\n2\n3\n", Slow: true}
		case strings.Contains(last, check.ToolPrompt), strings.Contains(last, check.PermissionPrompt):
			return fakemodel.Reply{ToolCall: spec.WriteCall(never)}
		}
		return fakemodel.Reply{Text: "One short sentence."}
	}
}

// authMethods is the advertised auth method each runtime logs in with
// from the environment realruntime gives it, so authenticate is graded
// with it (auth.method); a runtime not named here is graded without
// --auth-method, and auth.method skips.
var authMethods = map[realruntime.Kind]string{
	realruntime.CodexACP:  "api-key", // DEFAULT_AUTH_REQUEST logs it in with this one
	realruntime.GeminiCLI: "gemini-api-key",
}

// fakeFor bounds a fake model for one runtime's whole grading: dozens of
// launches, which take many minutes on a loaded machine (the default
// lifetime, 3 minutes, once ended a grading half way).
var fakeFor = fakemodel.Options{MaxRequests: 512, Lifetime: 40 * time.Minute}

// TestStandard_RealRuntimes grades the seven real runtimes pinned in
// conformance/runtimes (realruntime.Specs) with a working (fake) model, as
// many at once as -parallel allows: the verdict is OK once the known
// failures listed, each with its reason, in the runtime's committed
// acpcheck.baseline are excepted — every mandatory check graded, none
// failed. A baseline entry that starts passing fails the test, so the
// baselines cannot go stale.
//
// The gradings make conformance/README.md's runtime table, one row per
// runtime: a committed row that differs from its runtime's grading fails
// the test, and -update-runtime-table rewrites the rows of the runtimes
// graded (-run …/grade/<name> grades one).
func TestStandard_RealRuntimes(t *testing.T) {
	var mu sync.Mutex
	rows := map[realruntime.Kind]string{}
	t.Run("grade", func(t *testing.T) {
		for _, spec := range realruntime.Specs {
			t.Run(string(spec.Kind), func(t *testing.T) {
				t.Parallel()
				row := gradeRealRuntime(t, spec)
				if t.Failed() {
					return // a failed grading's row is neither written nor compared
				}
				mu.Lock()
				rows[spec.Kind] = row
				mu.Unlock()
			})
		}
	})
	if len(rows) == 0 {
		return // nothing graded (a -run that chose none, or no node)
	}
	readme := filepath.Join("..", "README.md")
	committed, err := readRuntimeTable(readme)
	require.NoError(t, err)
	if *updateRuntimeTable {
		maps.Copy(committed, rows)
		require.NoError(t, writeRuntimeTable(readme, committed))
		return
	}
	for _, spec := range realruntime.Specs {
		if row, ok := rows[spec.Kind]; ok {
			assert.Equal(t, row, committed[spec.Kind], "conformance/README.md's row of %s is not this run's: "+
				"go test ./conformance/check -run TestStandard_RealRuntimes -update-runtime-table rewrites it", spec.Kind)
		}
	}
}

// gradeRealRuntime grades the runtime and returns its README table row.
func gradeRealRuntime(t *testing.T, spec realruntime.Spec) string {
	// The file every write the model asks for names, in the sessions' cwd
	// (Gemini CLI refuses paths outside it before asking permission).
	cwd := t.TempDir()
	never := filepath.Join(cwd, "never-written")
	fake := fakemodel.Start(t, acpcheckScript(spec, never), fakeFor)
	rt := realruntime.Start(t, spec.Kind, fake)
	path := filepath.Join("..", "runtimes", string(spec.Kind), "acpcheck.baseline")
	f, err := os.Open(path)
	require.NoError(t, err)
	baseline, err := check.ParseBaseline(f, check.Standard())
	f.Close()
	require.NoError(t, err)

	argv, env := rt.Launch()
	// Each launch logs a line, then execs the runtime (same pid), so the
	// log says how many launches sharing saved.
	launches := filepath.Join(t.TempDir(), "launches")
	argv = append([]string{"/bin/sh", "-c", `echo launch >> "$0"; exec "$@"`, launches}, argv...)
	rep, err := check.Grade(context.Background(), check.Standard(), check.Config{
		Target: check.Target{Argv: argv, Dir: cwd, Env: env},
		// A launch of these runtimes costs seconds of CPU: the handshake
		// and session checks share one process; a check that does not
		// pass there is graded again on a fresh launch, so no verdict
		// changes.
		ShareProcess: true,
		AuthMethod:   authMethods[spec.Kind],
		// Generous: on a loaded 2-core machine a runtime's start alone
		// took 20-90 s (Gemini CLI's bundle). Only a failing wait costs it.
		Timeout:   120 * time.Second,
		ExitBound: 5 * time.Second,
		// Each check's start in the log, so a slow grading shows where
		// its time goes.
		Progress: func(p check.Progress) { t.Logf("check %d of %d: %s", p.N, p.Total, p.ID) },
	})
	require.NoError(t, err)
	logLaunches(t, launches, rep)
	rep.ApplyBaseline(baseline)
	var out bytes.Buffer
	require.NoError(t, check.WriteTable(&out, rep))
	for _, r := range rep.Results {
		switch {
		case r.Fixed:
			t.Errorf("%s passes now: remove it from %s", r.ID, path)
		case r.Status == check.StatusFail && !r.Known:
			t.Errorf("%s (%s) failed and is not in %s: %s", r.ID, r.Tier, path, r.Reason)
		case r.Status == check.StatusNeedsModel:
			t.Errorf("%s needs a working model, but the fake model works: %s", r.ID, r.Reason)
		case r.Status == check.StatusNeedsCredential:
			t.Errorf("%s needs a credential, but the runtime is set up with one: %s", r.ID, r.Reason)
		case r.Tier == check.TierMandatory && !r.Status.Graded():
			t.Errorf("%s was not graded: %s", r.ID, r.Reason)
		}
	}
	t.Logf("%s against the fake model:\n%s", spec.Kind, out.String())
	assert.NoFileExists(t, never, "every write was refused")
	realruntime.AssertOffline(t, fake)
	assert.False(t, fake.ModelRequestContains(realruntime.QwenMemoryExtraction),
		"Qwen Code's auto-memory is off (realruntime's setupQwen): no model call of its own after a turn")
	rt.AssertGone(t, 5*time.Second)
	row := runtimeRow(spec.Kind, rep)
	t.Logf("runtime table row:\n%s", row)
	return row
}

// runtimeRow is kind's row of the README's runtime table: what the
// grading learned the runtime advertises, and its grade.
// logLaunches logs how many times the grading launched the runtime, how
// many it would have without sharing, and which checks were graded again.
func logLaunches(t *testing.T, path string, rep check.Report) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	unshared := 0
	for _, r := range rep.Results {
		if !r.NotLaunched {
			unshared++
		}
		if r.Regraded != "" {
			t.Logf("%s graded again on a fresh launch: %s", r.ID, r.Regraded)
		}
	}
	t.Logf("%d launches (a launch per check: %d)", bytes.Count(b, []byte("launch\n")), unshared)
}

func runtimeRow(kind realruntime.Kind, rep check.Report) string {
	adv := rep.Advertised
	yes := func(gate string) string {
		if adv.Gates[gate] {
			return "yes"
		}
		return "—"
	}
	var transports []string
	for _, g := range []string{check.GateMCPHTTP, check.GateMCPSSE} {
		if adv.Gates[g] {
			transports = append(transports, strings.TrimPrefix(g, "mcpCapabilities."))
		}
	}
	mcp := "—"
	if len(transports) > 0 {
		mcp = strings.Join(transports, ", ")
	}
	auth := "—"
	if len(adv.AuthMethods) > 0 {
		auth = "`" + strings.Join(adv.AuthMethods, "`, `") + "`"
	}
	// A check the baseline lists as intermittent is counted apart, so the
	// row is the same whichever way it went this run.
	var graded []check.Result
	var sometimes []string
	for _, r := range rep.Results {
		if r.Intermittent {
			sometimes = append(sometimes, r.ID)
		} else {
			graded = append(graded, r)
		}
	}
	c := check.Count(graded)
	checks := fmt.Sprintf("%d pass, %d fail (%d known), %d skip", c.Pass, c.Fail, c.Known, c.Skip+c.NeedsModel+c.NeedsCredential)
	for _, id := range sometimes {
		checks += fmt.Sprintf(", `%s` intermittent", id)
	}
	checks += fmt.Sprintf("; %d of %d mandatory graded — %s", rep.Mandatory.Graded, rep.Mandatory.Total, rep.Verdict)
	cells := []string{"`" + string(kind) + "`", "`" + rep.PeerName() + "`",
		yes(check.GateLoadSession), yes(check.GateResume), yes(check.GateClose), yes(check.GateDelete), yes(check.GateList),
		yes(check.GateModes), yes(check.GateConfigOptions), mcp, auth, checks}
	return "| " + strings.Join(cells, " | ") + " |"
}

// The runtime table sits between these markers in conformance/README.md.
const (
	tableBegin = "<!-- runtime-table: generated by go test ./conformance/check -run TestStandard_RealRuntimes -update-runtime-table -->"
	tableEnd   = "<!-- end of runtime-table -->"
	tableHead  = "| runtime | agentInfo | load | resume | close | delete | list | modes | config options | MCP | auth methods | acpcheck |\n" +
		"|---|---|---|---|---|---|---|---|---|---|---|---|\n"
)

var tableRE = regexp.MustCompile(`(?s)` + regexp.QuoteMeta(tableBegin) + `\n` + regexp.QuoteMeta(tableHead) + `(.*?)` + regexp.QuoteMeta(tableEnd))

// readRuntimeTable returns the rows of the runtime table in the README at
// path, by runtime. A row of a runtime that is not in realruntime.Specs,
// or a line that is not a row, is an error.
func readRuntimeTable(path string) (map[realruntime.Kind]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := tableRE.FindSubmatch(b)
	if m == nil {
		return nil, fmt.Errorf("%s has no runtime table between its markers", path)
	}
	rows := map[realruntime.Kind]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(m[1]), "\n"), "\n") {
		if line == "" {
			continue
		}
		name, ok := strings.CutPrefix(line, "| `")
		name, _, ok2 := strings.Cut(name, "`")
		if _, known := realruntime.SpecOf(realruntime.Kind(name)); !ok || !ok2 || !known {
			return nil, fmt.Errorf("%s: the runtime table's line %q is not the row of a runtime in realruntime.Specs", path, line)
		}
		rows[realruntime.Kind(name)] = line
	}
	return rows, nil
}

// writeRuntimeTable writes rows as the runtime table in the README at
// path, in realruntime.Specs' order.
func writeRuntimeTable(path string, rows map[realruntime.Kind]string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !tableRE.Match(b) {
		return fmt.Errorf("%s has no runtime table between its markers", path)
	}
	var table strings.Builder
	for _, spec := range realruntime.Specs {
		if row, ok := rows[spec.Kind]; ok {
			table.WriteString(row + "\n")
		}
	}
	out := tableRE.ReplaceAllLiteral(b, []byte(tableBegin+"\n"+tableHead+table.String()+tableEnd))
	return os.WriteFile(path, out, 0o644)
}
