// Package gentest holds the hand-written tests of the generated package
// acpkit.dev/acpsdk/gen (which may contain only generated files): byte
// fidelity fixtures, the leniency keywords on real fields, negative cases,
// drift fixtures from real runtimes, dispatch and the typed peers.
package gentest

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
