package browsertest_test

import (
	"context"
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

// acpcheck (the scenario agent) and the reference client, built once.
var acpcheck, refclient string

func TestMain(m *testing.M) {
	testbin.MainBuilding(m, map[string]*string{testbin.ACPCheck: &acpcheck, testbin.RefClient: &refclient})
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

// report grades the reference client with a defect that fails
// update.unknown-variant, one that fails permission.answered listed as a
// known failure, and writes the HTML page.
func report(t *testing.T) string {
	t.Helper()
	rep, err := check.GradeClient(context.Background(), check.ClientStandard(), check.ClientConfig{
		Argv:         []string{refclient, "--fail-unknown-update", "--no-client-info", "--", check.AgentPlaceholder},
		AgentProgram: acpcheck,
		Timeout:      10 * time.Second,
		ExitBound:    3 * time.Second,
		Only:         []string{"session.turn", "handshake.client-info", "update.unknown-variant", "fs.read"},
	})
	require.NoError(t, err)
	rep.ApplyBaseline(check.Baseline{"handshake.client-info": "this test's known failure"})
	path := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, check.WriteHTML(f, rep))
	require.NoError(t, f.Close())
	return path
}

// TestHTMLReport_WhatAPersonSees opens the page in headless Chromium: the
// verdict, the failing row, the failed check's transcript open with the
// exchange in two columns, the known failure's transcript closed until
// its summary is clicked, and nothing loaded from anywhere else.
func TestHTMLReport_WhatAPersonSees(t *testing.T) {
	browser := chromium(t)
	page := report(t)

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browser),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	// A bound on the whole browser session, from the allocator down (a
	// timeout on a context that has not run yet would stop the browser).
	timer := time.AfterFunc(2*time.Minute, cancel)
	defer timer.Stop()

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("file://"+page)))
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		require.NoError(t, err, sel)
		return v
	}
	eval := func(js string) any {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[any](js))
		require.NoError(t, err, js)
		return v
	}
	assert.Equal(t, "FAILED", text("#verdict"))
	failRow := text(`tr[data-check="update.unknown-variant"]`)
	assert.Contains(t, failRow, "update.unknown-variant")
	assert.Contains(t, failRow, "fail")
	assert.Contains(t, failRow, "the client ended the connection before the agent answered its prompt")
	assert.Contains(t, text(`tr[data-check="handshake.client-info"]`), "fail (known)")
	assert.Equal(t, "", eval(`Array.from(document.querySelectorAll("link,script,img,iframe,object,embed")).map(e => e.outerHTML).join("\n")`),
		"the page loads nothing from elsewhere")

	// The failed check's exchange is open: a person reads the unknown
	// update the agent sent and the client's abort, in their columns.
	assert.Equal(t, true, eval(`document.getElementById("transcript-update.unknown-variant").open`))
	body := eval(`document.body.innerText`).(string)
	assert.Contains(t, body, "session/update acpcheck_unknown_variant")
	assert.Contains(t, body, "refclient: aborting: an update of a kind this client does not know")
	assert.Contains(t, body, "client graded")
	assert.Contains(t, body, "acpcheck's scenario agent")
	// The known failure's is closed: its lines are not on the screen.
	assert.Equal(t, false, eval(`document.getElementById("transcript-handshake.client-info").open`))
	knownLine := `"clientCapabilities":{"fs":{"readTextFile":false`
	assert.Equal(t, 1, strings.Count(body, knownLine), "only the open transcript shows the initialize request")

	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`details[id="transcript-handshake.client-info"] > summary`))))
	assert.Equal(t, true, eval(`document.getElementById("transcript-handshake.client-info").open`), "a click on its summary opens the transcript")
	expanded := eval(`document.body.innerText`).(string)
	assert.Equal(t, 2, strings.Count(expanded, knownLine), "the expanded transcript shows its exchange")
}
