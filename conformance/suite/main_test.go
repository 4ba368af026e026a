package suite

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"acpkit.dev/conformance/internal/testbin"
)

// refagent is the reference agent binary, built once for the suite.
var refagentBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "suite-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	refagentBin, err = testbin.Build(dir, testbin.RefAgent)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}
