package check_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/conformance/check"
	reference "acpkit.dev/conformance/refagent"
	"acpkit.dev/internal/acpnettest"
)

// listen serves the reference agent over transport, as `refagent --listen
// 127.0.0.1:0 --transport T` does, until the test ends, and returns its URL.
func listen(t *testing.T, transport string, opts reference.Options) string {
	return acpnettest.Serve(t, func(ctx context.Context, w io.Writer) error {
		return reference.Listen(ctx, opts, "127.0.0.1:0", transport, w, slog.New(slog.DiscardHandler))
	})
}

// TestTR2_TR13_TR16_GradesTheServedReferenceAgent grades the reference
// agent served over each transport (acpcheck --url): every check that
// needs no process passes; the process checks are skipped saying why, and
// over Streamable HTTP so is the one whose non-JSON line the transport
// answers itself. With ShareProcess the session checks share one
// connection, with the same results.
func TestTR2_TR13_TR16_GradesTheServedReferenceAgent(t *testing.T) {
	opts := reference.DefaultOptions()
	opts.LoadSession, opts.Resume, opts.Close, opts.Delete = true, true, true, true
	for _, transport := range []string{reference.TransportHTTP, reference.TransportWS, reference.TransportTCP} {
		for _, share := range []bool{false, true} {
			name := transport
			if share {
				name += "/shared"
			}
			t.Run(name, func(t *testing.T) { gradeServed(t, transport, share, opts) })
		}
	}
}

// gradeServed grades the reference agent served over transport, asserting
// what TestTR2_TR13_TR16_GradesTheServedReferenceAgent says.
func gradeServed(t *testing.T, transport string, share bool, opts reference.Options) {
	url := listen(t, transport, opts)
	rep, err := check.Grade(context.Background(), check.Standard(), check.Config{
		Target:       check.Target{URL: url, Dir: t.TempDir()},
		Timeout:      testTimeout,
		ExitBound:    testExitBound,
		ShareProcess: share,
	})
	require.NoError(t, err)
	assert.Equal(t, []string{url}, rep.Command)
	assert.Equal(t, "acpkit-refagent", rep.Peer.Name)
	assert.False(t, check.Failed(rep.Results))
	for _, r := range rep.Results {
		switch {
		case strings.HasPrefix(r.ID, "process."):
			assert.Equal(t, check.StatusSkip, r.Status, r.ID)
			assert.Contains(t, r.Reason, "needs the agent's process", r.ID)
		case r.ID == "rpc.parse-error" && transport == reference.TransportHTTP:
			assert.Equal(t, check.StatusSkip, r.Status, r.ID)
			assert.Contains(t, r.Reason, "TR-9", r.ID)
		case r.NotLaunched && strings.Contains(r.Reason, "does not advertise"):
			// A capability these options leave out: skipped, as
			// over stdio.
			assert.Equal(t, check.StatusSkip, r.Status, r.ID)
		default:
			assert.Equal(t, check.StatusPass, r.Status, "%s: %s\n%v", r.ID, r.Reason, r.Transcript)
		}
		assert.Empty(t, r.Regraded, r.ID)
	}
}
