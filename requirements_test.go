// Package acpkit holds no code: the module's packages are acpsdk,
// conformance and internal. This directory has the module's requirement
// index and its check.
package acpkit

import (
	"testing"

	"github.com/stretchr/testify/require"

	"acpkit.dev/internal/reqindex"
)

// The requirement index of module acpkit.dev (REQUIREMENTS.md, whose top
// documents the format): every spec ID the module's test names cite has a
// line saying what it demands. When the specs are beside the repository
// (../shared, as in CI), the index is also checked against them; a clone
// without ../shared checks the file and the tests only.

// specs are the specifications the index draws IDs from, as its headings
// name them.
var specs = []reqindex.Spec{
	// The SDK's requirements, all in §7: every one is listed.
	{Name: "protocol.md", Path: "../shared/spec/protocol.md", Complete: []string{"§7"}},
	// The network transports' (TR-1…18), in sections with titles, not
	// numbers: acpsdk/acpnet serves every one.
	{Name: "transport.md", Path: "../shared/spec/transport.md", Complete: []string{"Streamable HTTP", "WebSocket", "Raw TCP", "Security"}},
	// The adapter's, for the connection rules acpsdk serves it (SP-8).
	{Name: "adapter.md", Path: "../shared/spec/adapter.md"},
}

func TestRequirementsIndexed(t *testing.T) {
	problems, err := reqindex.Check("REQUIREMENTS.md", ".", specs)
	require.NoError(t, err)
	for _, p := range problems {
		t.Error(p)
	}
}
