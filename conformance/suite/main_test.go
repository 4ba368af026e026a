package suite

import (
	"testing"

	"acpkit.dev/conformance/internal/testbin"
)

// refagentBin is the reference agent binary, built once for the suite.
var refagentBin string

func TestMain(m *testing.M) { testbin.Main(m, &refagentBin) }
