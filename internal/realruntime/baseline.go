//go:build linux

package realruntime

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"acpkit.dev/internal/npmtest"
)

// Scenario names one thing the suite asks of every runtime, through the
// adapter and through acprun.
type Scenario string

// The suite's scenarios.
const (
	// ScenarioStreamedText: a prompt's answer streams in chunks and
	// accumulates into one message.
	ScenarioStreamedText Scenario = "streamed-text"
	// ScenarioTwoTurns: a second turn on the same process carries the
	// first one's conversation.
	ScenarioTwoTurns Scenario = "two-turns"
	// ScenarioRefusedPermission: the permission the runtime asks for a
	// write is refused, and the file never appears.
	ScenarioRefusedPermission Scenario = "refused-permission"
	// ScenarioResume: the saved session continues in a new process.
	ScenarioResume Scenario = "resume"
	// ScenarioResumeUnknown: an unknown session id falls back to a new
	// session.
	ScenarioResumeUnknown Scenario = "resume-unknown"
	// ScenarioCancel: a turn cancelled mid-stream ends cancelled, with
	// exactly one session/cancel on the wire.
	ScenarioCancel Scenario = "cancel"
	// ScenarioKilledMidCommand: the runtime killed while a shell command
	// it started runs fails the turn, and nothing of its tree, the
	// command included, is left once the session is stopped.
	ScenarioKilledMidCommand Scenario = "killed-mid-command"
	// ScenarioNothingLeft: no process of the runtime's tree outlives a
	// session stopped normally.
	ScenarioNothingLeft Scenario = "nothing-left"
)

// Scenarios lists every scenario, in the order the suite meets them.
var Scenarios = []Scenario{
	ScenarioStreamedText, ScenarioTwoTurns, ScenarioRefusedPermission, ScenarioNothingLeft,
	ScenarioResume, ScenarioCancel, ScenarioResumeUnknown, ScenarioKilledMidCommand,
}

// Baseline is a runtime's known scenario failures, one per line of
// conformance/runtimes/<kind>/scenarios.baseline: `SCENARIO reason`, `#`
// comments. A listed scenario that fails is reported with its reason and
// does not fail the test; one that passes fails it, so a baseline never
// goes stale.
//
// A scenario written `SCENARIO?` fails only some runs, for a cause in the
// runtime not yet found: its failure is reported with its reason and its
// pass is accepted, so the line neither hides a steady failure's return
// to passing nor makes every other run fail.
type Baseline struct {
	path         string
	known        map[Scenario]string
	intermittent map[Scenario]bool
}

// LoadBaseline reads kind's baseline; an unknown scenario or a line
// without a reason fails t.
func LoadBaseline(t testing.TB, kind Kind) Baseline {
	t.Helper()
	root, err := npmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "conformance", "runtimes", string(kind), "scenarios.baseline")
	b, err := ParseBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ParseBaseline reads the baseline file at path; a missing file is an
// empty baseline.
func ParseBaseline(path string) (Baseline, error) {
	b := Baseline{path: path, known: map[Scenario]string{}, intermittent: map[Scenario]bool{}}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return b, nil
	}
	if err != nil {
		return b, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, reason, _ := strings.Cut(line, " ")
		reason = strings.TrimSpace(reason)
		id, sometimes := strings.CutSuffix(id, "?")
		switch {
		case !slices.Contains(Scenarios, Scenario(id)):
			return b, fmt.Errorf("%s:%d: unknown scenario %q (known: %v)", path, n, id, Scenarios)
		case reason == "":
			return b, fmt.Errorf("%s:%d: %s has no reason", path, n, id)
		}
		b.known[Scenario(id)] = reason
		b.intermittent[Scenario(id)] = sometimes
	}
	return b, sc.Err()
}

// Known is the reason a scenario is listed, or "".
func (b Baseline) Known(id Scenario) string { return b.known[id] }

// Check collects one scenario's failed assertions instead of failing the
// test at once (it is testify's TestingT), so Run can hold them against
// the baseline.
type Check struct {
	failures []string
}

// Errorf records a failed assertion.
func (c *Check) Errorf(format string, args ...any) {
	c.failures = append(c.failures, fmt.Sprintf(format, args...))
}

// Failed reports whether an assertion failed so far.
func (c *Check) Failed() bool { return len(c.failures) > 0 }

// Run runs one scenario as the subtest id of t (passed to scenario for
// what is not the scenario's own assertion: a broken set-up), its
// assertions made on c,
// and holds the outcome against the baseline: a failure it lists is
// logged as known, any other fails the subtest; a listed scenario that
// passes fails it too. It reports whether the scenario passed.
func (b Baseline) Run(t *testing.T, id Scenario, scenario func(t *testing.T, c *Check)) bool {
	t.Helper()
	passed := false
	t.Run(string(id), func(t *testing.T) {
		c := &Check{}
		scenario(t, c)
		var ok bool
		ok, passed = b.verdict(id, c.failures)
		report := t.Errorf
		if ok {
			report = t.Logf
		}
		if msg := b.message(id, c.failures); msg != "" {
			report("%s", msg)
		}
	})
	return passed
}

// verdict holds a scenario's failures against the baseline: ok is false
// when the test must fail (an unlisted failure, or a listed scenario that
// passes), passed when the scenario itself passed.
func (b Baseline) verdict(id Scenario, failures []string) (ok, passed bool) {
	known := b.known[id] != ""
	if b.intermittent[id] {
		return true, len(failures) == 0
	}
	return known == (len(failures) > 0), len(failures) == 0
}

// message says what verdict decided, or "" for a plain pass.
func (b Baseline) message(id Scenario, failures []string) string {
	known := b.known[id]
	switch {
	case len(failures) > 0 && b.intermittent[id]:
		return fmt.Sprintf("known intermittent failure (%s): %s\n%s", b.path, known, strings.Join(failures, "\n"))
	case len(failures) > 0 && known != "":
		return fmt.Sprintf("known failure (%s): %s\n%s", b.path, known, strings.Join(failures, "\n"))
	case b.intermittent[id]:
		return fmt.Sprintf("%s, which fails only some runs (%s), passed this one", id, b.path)
	case len(failures) > 0:
		return strings.Join(failures, "\n")
	case known != "":
		return fmt.Sprintf("%s passes now: remove it from %s (%s)", id, b.path, known)
	}
	return ""
}
