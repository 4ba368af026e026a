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
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) {
		if refagentDir != "" {
			_ = os.RemoveAll(refagentDir)
		}
	}))
}
