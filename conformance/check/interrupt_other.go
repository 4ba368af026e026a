//go:build !unix && !windows

package check

import "errors"

// interrupt has no interrupt to send on this platform.
func interrupt(int) error { return errors.New("no interrupt signal on this platform") }

// interruptName names the interrupt in transcripts.
const interruptName = "interrupt"
