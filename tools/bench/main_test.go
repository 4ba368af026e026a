package bench

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == chunkRuntimeArg {
		os.Exit(chunkRuntime(os.Stdin, os.Stdout))
	}
	// The cleanup replaces goleak's os.Exit, so it must exit with the code
	// it is given: returning would exit 0 and hide a leak.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if refagentDir != "" {
			_ = os.RemoveAll(refagentDir)
		}
		os.Exit(code)
	}))
}
