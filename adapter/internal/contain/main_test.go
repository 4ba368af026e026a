package contain

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves the scanner's goroutine running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
