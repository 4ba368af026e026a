package refagent

import (
	"testing"

	"acpkit.dev/conformance/internal/testbin"
)

// binary is the refagent command, built once for the process tests.
var binary string

func TestMain(m *testing.M) { testbin.Main(m, &binary) }
