package realclients_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/conformance/check"
	"acpkit.dev/conformance/internal/readmetable"
	"acpkit.dev/conformance/internal/testbin"
	"acpkit.dev/internal/npmtest"
)

var update = flag.Bool("update", false, "rewrite the real clients' table in conformance/README.md from this run")

// The binaries the clients and the grading need, built once in TestMain:
// acpcheck (the scenario agent), acprun, coder/acp-go-sdk's example
// client at the version go.mod pins, and the reference client.
var acpcheck, acprun, coderClient, refclient string

const (
	pkgACPRun      = "acpkit.dev/adapter/cmd/acprun"
	pkgCoderClient = "github.com/coder/acp-go-sdk/example/client"
)

func TestMain(m *testing.M) {
	testbin.MainBuilding(m, map[string]*string{testbin.ACPCheck: &acpcheck, testbin.RefClient: &refclient, pkgACPRun: &acprun, pkgCoderClient: &coderClient})
}

// realClient is one graded client: how it is started, and what the README
// says of it.
type realClient struct {
	// name is the baseline's file name, <name>.baseline.
	name string
	// what names the client and its pinned version in the README.
	what string
	// argv is the client's command line, {agent} where its agent goes.
	argv func(t *testing.T) []string
	// shown is argv as the README shows it.
	shown string
	// lineBound is the client's own bound on a line (its SDK's).
	lineBound int
	// env, when set, is the client's environment.
	env func(t *testing.T) []string
	// only, when set, limits the grading to these checks.
	only []string
}

// realClients are graded in this order and listed in the README so.
var realClients = []realClient{
	{
		name: "acprun", what: "`acprun` (the adapter, this tree)",
		argv:  func(*testing.T) []string { return []string{acprun, "--command", check.AgentPlaceholder, "hi"} },
		shown: `acprun --command "{agent}" hi`, lineBound: 10 << 20,
	},
	{
		// The continuation checks need a session to continue, which the
		// plain run has not: acprun --resume gives it one.
		name: "acprun-resume", what: "`acprun` continuing a saved session (the continuation checks only)",
		argv: func(*testing.T) []string {
			return []string{acprun, "--command", check.AgentPlaceholder, "--resume", "acpcheck-saved-session", "hi"}
		},
		shown: `acprun --command "{agent}" --resume acpcheck-saved-session hi`, lineBound: 10 << 20,
		only: []string{"session.cwd-absolute", "session.continuation-unadvertised", "session.continuation-once"},
	},
	{
		name: "typescript-sdk", what: "`@agentclientprotocol/sdk` 2.4.0 (`conformance/tsinterop/prompt_client.mjs`)",
		argv: func(t *testing.T) []string {
			node := npmtest.Node(t)
			dir := repoDir(t, "conformance", "tsinterop")
			requireInstalled(t, filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk"))
			return []string{node, filepath.Join(dir, "prompt_client.mjs"), "--", check.AgentPlaceholder}
		},
		shown: `node prompt_client.mjs -- {agent}`, lineBound: 32 << 20,
	},
	{
		name: "coder-acp-go-sdk", what: "`github.com/coder/acp-go-sdk` v0.13.0 `example/client`",
		// Its permission prompt reads a choice from stdin and, at the end
		// of input, asks again at once, without end: a core busy for the
		// whole of permission.answered's wait (60 CPU-seconds of its 74
		// measured). So it gets the stdin of a terminal where no one
		// types: a fifo it opens for reading and writing, which never
		// ends and never delivers.
		argv: func(t *testing.T) []string {
			fifo := filepath.Join(t.TempDir(), "stdin")
			return []string{"/bin/sh", "-c", `[ -p "$2" ] || mkfifo "$2"; exec "$0" "$1" 0<>"$2"`,
				coderClient, check.AgentPlaceholder, fifo}
		},
		shown: `client {agent} 0<>fifo`, lineBound: 10 << 20,
	},
	{
		name: "acpx", what: "`acpx` 0.19.1 (`@agentclientprotocol/sdk` 1.9.0)",
		argv: func(t *testing.T) []string {
			node := npmtest.Node(t)
			cli := repoDir(t, "conformance", "realclients", "acpx", "node_modules", "acpx", "dist", "cli.js")
			requireInstalled(t, cli)
			return []string{node, cli, "--agent", check.AgentPlaceholder, "exec", "hi"}
		},
		shown: `acpx --agent "{agent}" exec hi`, lineBound: 32 << 20,
		// acpx keeps its sessions and settings under HOME.
		env: func(t *testing.T) []string { return append(os.Environ(), "HOME="+t.TempDir()) },
	},
}

func repoDir(t *testing.T, elem ...string) string {
	t.Helper()
	root, err := npmtest.RepoRoot()
	require.NoError(t, err)
	return filepath.Join(append([]string{root}, elem...)...)
}

func requireInstalled(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s is not installed (run `make deps`: scripts/install-test-deps.sh runs npm ci from the lock files): %v", path, err)
	}
}

// TestClients_Graded grades the four real clients (two at a time: the
// scenario agent mostly waits, the clients start Node or Go binaries)
// against their baselines, then checks the README's table.
func TestClients_Graded(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (make check) leaves out the real clients; make test grades them")
	}
	rows := make([]string, len(realClients))
	var mu sync.Mutex
	t.Run("clients", func(t *testing.T) {
		for i, rc := range realClients {
			t.Run(rc.name, func(t *testing.T) {
				t.Parallel()
				rep := gradeClient(t, rc)
				mu.Lock()
				rows[i] = tableRow(rc, rep)
				mu.Unlock()
			})
		}
	})
	if slices.Contains(rows, "") || t.Failed() {
		t.Log("the README's table is checked only after every client was graded as its baseline says")
		return
	}
	table := "| client | command graded | grade (before the baseline) |\n|---|---|---|\n" + strings.Join(rows, "")
	const begin = "<!-- BEGIN real clients: generated by `go test ./conformance/realclients -update`; do not edit -->"
	const end = "<!-- END real clients -->"
	current, err := readmetable.Sync(repoDir(t, "conformance", "README.md"), begin, end, table, *update)
	require.NoError(t, err)
	if !*update {
		assert.Equal(t, table, current, "conformance/README.md's client table is stale: run go test ./conformance/realclients -update")
	}
}

// gradeClient grades rc and holds the report to rc's baseline: every
// failure listed, every listed check failing, every entry with a reason.
func gradeClient(t *testing.T, rc realClient) check.Report {
	cfg := check.ClientConfig{
		Argv:         rc.argv(t),
		AgentProgram: acpcheck,
		// Generous: Node clients start in seconds on a loaded machine.
		Timeout:   20 * time.Second,
		ExitBound: 10 * time.Second,
		LineBound: rc.lineBound,
		Only:      rc.only,
	}
	if rc.env != nil {
		cfg.Env = rc.env(t)
	}
	rep, err := check.GradeClient(context.Background(), check.ClientStandard(), cfg)
	require.NoError(t, err)
	f, err := os.Open(rc.name + ".baseline")
	require.NoError(t, err, "every graded client has a baseline, empty when it passes everything")
	baseline, err := check.ParseBaseline(f, check.ClientStandard())
	f.Close()
	require.NoError(t, err)
	for id, reason := range baseline {
		assert.NotEmpty(t, reason, "%s.baseline: %s has no reason", rc.name, id)
	}
	rep.ApplyBaseline(baseline)
	var table bytes.Buffer
	require.NoError(t, check.WriteTable(&table, rep))
	for _, r := range rep.Results {
		assert.False(t, r.Status == check.StatusFail && !r.Known, "%s fails and %s.baseline does not list it: %s", r.ID, rc.name, r.Reason)
		assert.False(t, r.Fixed, "%s passes: drop it from %s.baseline", r.ID, rc.name)
	}
	if t.Failed() {
		t.Logf("%s graded:\n%s", rc.name, table.String())
	}
	return rep
}

// tableRow is one client's line of the README's table. The grade is the
// client's own, before its baseline excuses anything.
func tableRow(rc realClient, rep check.Report) string {
	var failed, skipped []string
	own := slices.Clone(rep.Results)
	for i, r := range own {
		own[i].Known, own[i].Fixed = false, false
		switch r.Status {
		case check.StatusFail:
			failed = append(failed, fmt.Sprintf("`%s` (%s)", r.ID, r.Tier))
		case check.StatusSkip:
			skipped = append(skipped, "`"+r.ID+"`")
		}
	}
	result := fmt.Sprintf("**%s**: %d of %d pass", check.Judge(own), rep.Summary.Pass, len(rep.Results))
	if len(failed) > 0 {
		result += "; fail, each with its reason in the baseline: " + strings.Join(failed, ", ")
	}
	if len(skipped) > 0 {
		result += "; skipped: " + strings.Join(skipped, ", ")
	}
	return fmt.Sprintf("| %s | `%s` | %s |\n", rc.what, rc.shown, result)
}
