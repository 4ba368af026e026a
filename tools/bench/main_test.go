package bench

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) {
		if refagentDir != "" {
			_ = os.RemoveAll(refagentDir)
		}
	}))
}
