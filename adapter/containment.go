package adapter

import (
	"fmt"
	"slices"
	"strings"

	"acpkit.dev/adapter/internal/contain"
)

// Containment selects how a session keeps what its runtime spawns within
// reach of StopSession beyond the runtime's process group (TD-15, TD-16;
// beyond the seed, whose group kill misses every descendant that starts a
// session or group of its own, TD-12). It applies to local launches on
// Linux and macOS; on Windows the Job Object contains every descendant
// (SP-5), and over SSH the runtime runs out of reach (TD-14).
type Containment string

// The containments.
const (
	// ContainmentAuto, the default: on Linux a cgroup v2 of the session's
	// own when this process may create one (as root, in a systemd unit
	// with Delegate=yes, or under WithCgroupParent), else the tracked
	// descendant set; on macOS the tracked set.
	ContainmentAuto Containment = "auto"
	// ContainmentTracked: the tracked descendant set, never a cgroup.
	ContainmentTracked Containment = "tracked"
	// ContainmentOff: the process group alone, as the seed specifies.
	ContainmentOff Containment = "off"
)

// Containments lists every Containment, the default first.
var Containments = []Containment{ContainmentAuto, ContainmentTracked, ContainmentOff}

// WithContainment sets how sessions contain their runtime's descendants;
// the default is ContainmentAuto. New refuses a value not in Containments.
func WithContainment(c Containment) Option {
	return func(o *options) { o.contain.Mode = contain.Mode(c) }
}

// WithCgroupParent names a cgroup v2 directory this process may create
// cgroups in (one delegated to it), under which each session gets a cgroup
// of its own; by default that is this process's own cgroup.
func WithCgroupParent(dir string) Option {
	return func(o *options) { o.contain.CgroupParent = dir }
}

// checkContainment refuses a Containment New does not know; "" is the
// default.
func checkContainment(c contain.Mode) error {
	if c == "" || slices.Contains(Containments, Containment(c)) {
		return nil
	}
	names := make([]string, len(Containments))
	for i, k := range Containments {
		names[i] = string(k)
	}
	return fmt.Errorf("unknown containment %q: want one of %s", c, strings.Join(names, ", "))
}
