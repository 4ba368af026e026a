//go:build !linux && !darwin

package contain

import (
	"errors"
	"time"
)

// errNoTracking: the tracked set reads Linux's /proc or macOS's sysctl.
var errNoTracking = errors.New("no process table to track descendants in on this platform")

func trackingAvailable() error { return errNoTracking }

// scanner and tracker stand in for the Linux and macOS ones.
type scanner struct{}

type tracker struct{}

var processScanner = &scanner{}

func (*scanner) track(int, string) (*tracker, error) { return nil, errNoTracking }

func (*tracker) refresh()              {}
func (*tracker) kill()                 {}
func (*tracker) release(time.Time) int { return 0 }
