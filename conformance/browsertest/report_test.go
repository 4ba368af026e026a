//go:build linux

package browsertest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/conformance/check"
	"acpkit.dev/conformance/internal/testbin"
)

// acpcheck, the reference agent and the reference client, built once.
var acpcheck, refagent, refclient string

func TestMain(m *testing.M) {
	testbin.MainBuilding(m, map[string]*string{testbin.ACPCheck: &acpcheck, testbin.RefAgent: &refagent, testbin.RefClient: &refclient})
}

// chromium is Debian's headless browser (scripts/install-test-deps.sh
// installs it); a test skips without it only under -short.
func chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short (make check) leaves out the browser; make test runs it")
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not installed (run `make deps`: scripts/install-test-deps.sh installs it)")
	return ""
}

// acpcheckHTML runs the acpcheck command with args, --html added before
// them (after "client" for client grading: after "--" every argument is
// the client's), expects exit status want, and returns the page written.
func acpcheckHTML(t *testing.T, want int, args ...string) string {
	t.Helper()
	page := filepath.Join(t.TempDir(), "report.html")
	argv := append([]string{"--html", page}, args...)
	if len(args) > 0 && args[0] == "client" {
		argv = append([]string{"client", "--html", page}, args[1:]...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, acpcheck, argv...)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	code := 0
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err, "%s", out)
	}
	require.Equal(t, want, code, "%s", out)
	return page
}

// page is a report opened in headless Chromium.
type page struct {
	t   *testing.T
	ctx context.Context
}

// open starts Chromium on the file and returns the page once loaded; the
// browser is stopped, and its profile removed, when the test ends.
func open(t *testing.T, path string) page {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	// A bound on the whole browser session, from the allocator down (a
	// timeout on a context that has not run yet would stop the browser).
	timer := time.AfterFunc(2*time.Minute, cancel)
	t.Cleanup(func() {
		timer.Stop()
		cancel()
		cancelAlloc()
	})
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("file://"+path)))
	return page{t: t, ctx: ctx}
}

// eval evaluates js in the page.
func eval[T any](p page, js string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](js))
	require.NoError(p.t, err, js)
	return v
}

// click clicks the element sel selects, as a person would, and waits
// (a bounded time) until an element of then is on the screen: the browser
// handles the click on its own time, a loaded machine's slower.
func (p page) click(sel, then string) {
	p.t.Helper()
	require.NoError(p.t, chromedp.Do(p.ctx, chromedp.Click(chromedp.CSS(sel))))
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	require.NoError(p.t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(then))), "after a click on %s, %s is still not on the screen", sel, then)
}

// shown is the text a person sees: what is rendered, not what is in the
// document (a closed <details> keeps its lines out of innerText).
func (p page) shown() string { return eval[string](p, `document.body.innerText`) }

// failingRows are the IDs of the table's rows whose result a person reads
// as a failure, known or not.
func (p page) failingRows() []string {
	return eval[[]string](p, `Array.from(document.querySelectorAll("#checks tbody tr"))
		.filter(tr => tr.querySelector("td.result").innerText.startsWith("fail"))
		.map(tr => tr.dataset.check)`)
}

// column says under which column head of its transcript the first message
// holding text is drawn, by where both stand on the screen: "client"
// (the left-hand column), "agent" (the right-hand one), or "" when no
// such message is visible.
func (p page) column(transcriptID, text string) string {
	return eval[string](p, `(() => {
		const box = document.getElementById(`+jsString("transcript-"+transcriptID)+`);
		const msg = Array.from(box.querySelectorAll(".msg")).find(m => m.innerText.includes(`+jsString(text)+`));
		if (!msg || !msg.checkVisibility()) return "";
		const [, client, agent] = Array.from(box.querySelectorAll(".colhead")).map(h => h.getBoundingClientRect());
		if (!(client.right <= agent.left)) return "the client's column is not left of the agent's";
		const r = msg.getBoundingClientRect();
		if (r.left >= client.left - 1 && r.right <= client.right + 1) return "client";
		if (r.left >= agent.left - 1 && r.right <= agent.right + 1) return "agent";
		return "across " + r.left + ".." + r.right;
	})()`)
}

func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// assertSelfContained: the page loads nothing from anywhere else.
func (p page) assertSelfContained() {
	p.t.Helper()
	assert.Equal(p.t, "", eval[string](p, `Array.from(document.querySelectorAll("link,script,img,iframe,object,embed,[src],[href]")).map(e => e.outerHTML).join("\n")`),
		"the page loads nothing from elsewhere")
}

// TestHTMLReport_ClientGrading_WhatAPersonSees: `acpcheck client --html`
// on the reference client with two defects, one of them a known failure
// in the baseline, opened in headless Chromium. A person sees the verdict,
// exactly the two failing rows, the failed check's exchange open with the
// agent's unknown update in the agent's column and the client's abort in
// the client's, each line with its time, and the known failure's exchange
// closed until its summary is clicked.
func TestHTMLReport_ClientGrading_WhatAPersonSees(t *testing.T) {
	chromium(t)
	baseline := filepath.Join(t.TempDir(), "refclient.baseline")
	require.NoError(t, os.WriteFile(baseline, []byte("handshake.client-info  this test's known failure\n"), 0o600))
	path := acpcheckHTML(t, check.ExitFailed, "client", "--timeout", "20s", "--exit-bound", "5s", "--baseline", baseline,
		"--only", "session.turn,handshake.client-info,update.unknown-variant,fs.read",
		"--", refclient, "--fail-unknown-update", "--no-client-info", "--", "{agent}")
	p := open(t, path)

	assert.Equal(t, "FAILED", eval[string](p, `document.getElementById("verdict").innerText`))
	assert.Equal(t, "rgb(180, 35, 24)", eval[string](p, `getComputedStyle(document.getElementById("verdict")).backgroundColor`), "the verdict is drawn red")
	assert.ElementsMatch(t, []string{"update.unknown-variant", "handshake.client-info"}, p.failingRows())
	failRow := eval[string](p, `document.querySelector('tr[data-check="update.unknown-variant"]').innerText`)
	assert.Contains(t, failRow, "mandatory")
	// (Whether the agent was writing or waiting for the prompt's answer
	// when the client left is a race; that it left is not.)
	assert.Contains(t, failRow, "the client ended the connection")
	assert.Contains(t, eval[string](p, `document.querySelector('tr[data-check="handshake.client-info"] td.result').innerText`), "fail (known)")
	p.assertSelfContained()

	// The failed check's exchange is open, in two columns under their
	// heads, every line with its time.
	shown := p.shown()
	assert.Contains(t, shown, "client graded")
	assert.Contains(t, shown, "acpcheck's scenario agent")
	assert.Equal(t, "agent", p.column("update.unknown-variant", "session/update acpcheck_unknown_variant"), "the agent's update, in the agent's column")
	assert.Equal(t, "client", p.column("update.unknown-variant", "refclient: aborting: an update of a kind this client does not know"), "the client's stderr, in the client's column")
	assert.Equal(t, "client", p.column("update.unknown-variant", `"method":"initialize"`), "the client's initialize, in the client's column")
	times := eval[[]string](p, `Array.from(document.querySelectorAll('[id="transcript-update.unknown-variant"] .at:not(.colhead)')).map(e => e.innerText)`)
	require.NotEmpty(t, times)
	for _, at := range times {
		assert.Regexp(t, `^\d+(\.\d+)? (µs|ms|s)$`, at, "each line's time since the check began")
	}

	// The known failure's exchange is closed: its lines are not on the
	// screen until a person clicks its summary.
	const knownLine = `"method":"initialize"` // (the params' members come in any order)
	assert.Equal(t, "", p.column("handshake.client-info", knownLine), "closed: not on the screen")
	assert.Equal(t, 1, strings.Count(shown, knownLine), "only the open transcript shows its initialize request")
	p.click(`details[id="transcript-handshake.client-info"] > summary`, `details[id="transcript-handshake.client-info"] .msg`)
	assert.Equal(t, "client", p.column("handshake.client-info", knownLine), "a click on its summary opens it")
	assert.Equal(t, 2, strings.Count(p.shown(), knownLine), "the expanded transcript shows its exchange")
}

// TestHTMLReport_AgentGrading_WhatAPersonSees: `acpcheck --html` grading
// the reference agent with a cancellation defect. The same page: the
// verdict, the one failing row, and its exchange with acpcheck's
// session/cancel in the client's column and the agent's wrong stop
// reason in the agent's.
func TestHTMLReport_AgentGrading_WhatAPersonSees(t *testing.T) {
	chromium(t)
	path := acpcheckHTML(t, check.ExitFailed, "--timeout", "20s", "--only", "session.new,prompt.cancel",
		"--command", refagent+" --cancel-stop-reason end_turn")
	p := open(t, path)

	assert.Equal(t, "FAILED", eval[string](p, `document.getElementById("verdict").innerText`))
	assert.Equal(t, []string{"prompt.cancel"}, p.failingRows())
	assert.Contains(t, eval[string](p, `document.querySelector('tr[data-check="session.new"] td.result').innerText`), "pass")
	p.assertSelfContained()
	shown := p.shown()
	assert.Contains(t, shown, "acpcheck graded the agent acpkit-refagent 1.0.0")
	assert.Equal(t, "client", p.column("prompt.cancel", `"method":"session/cancel"`), "acpcheck, the client, in the client's column")
	assert.Equal(t, "agent", p.column("prompt.cancel", `"stopReason":"end_turn"`), "the agent's answer in the agent's column")
}
