// Package contain keeps every process a session's runtime spawns within
// reach of the session's teardown, beyond the process group the seed
// signals (TD-15, TD-16; [acpkit], the adapter spec's §19). Real runtimes
// start their tool commands in sessions of their own and leave daemons
// behind; the group kill reaches neither.
//
// A launch chooses one layer before the runtime starts (Choose):
//
//   - a cgroup v2 of the session's own (Linux), created under the
//     orchestrator's own cgroup or a cgroup the operator names, which the
//     runtime is started inside (clone3 with CLONE_INTO_CGROUP), so it never
//     runs outside it. The kill is cgroup.kill, which no fork can race;
//     release waits until cgroup.events says the cgroup is empty, then
//     removes it.
//   - else a tracked descendant set (Linux and macOS): every process seen
//     while its parent was tracked, and every process carrying the
//     session's token in its environment (which a double-forked daemon
//     inherits even though init adopted it), keyed by pid and start time.
//     The kill stops the set, rescans until nothing new appears, then kills
//     it; every signal goes through a handle that proves the process is
//     still the one tracked (a pidfd on Linux), so a reused pid is never
//     signalled.
//   - else nothing beyond the process group: when containment is off, or
//     no layer is available.
//
// The choice is logged once per launch (LogChosen).
package contain

import (
	"time"
)

// Mode is the containment an operator asks for.
type Mode string

// The modes. The zero value is Auto.
const (
	// Auto: a cgroup v2 of the session's own when one can be created,
	// else the tracked descendant set, else the process group alone.
	Auto Mode = "auto"
	// Tracked: the tracked descendant set, never a cgroup.
	Tracked Mode = "tracked"
	// Off: the process group alone, as the seed specifies (TD-12).
	Off Mode = "off"
)

// Modes lists every mode, Auto first.
var Modes = []Mode{Auto, Tracked, Off}

// Config is one launch's containment request.
type Config struct {
	// Mode is the containment asked for; "" means Auto.
	Mode Mode
	// CgroupParent is a cgroup v2 directory the orchestrator may create
	// cgroups in (one it owns, or one delegated to it); "" means the
	// orchestrator's own cgroup.
	CgroupParent string
	// Reason, with Mode Off, says why for the record; "" means the
	// operator turned containment off.
	Reason string
}

// Mechanism is the layer a launch uses.
type Mechanism string

// The mechanisms, as the LogChosen record's mechanism attribute names them.
const (
	Cgroup       Mechanism = "cgroup"
	TrackedSet   Mechanism = "tracked"
	ProcessGroup Mechanism = "process group"
)

// The records this package writes, byte for byte.
const (
	// LogChosen is Info, once per launch: mechanism, pid, and cgroup (the
	// session's cgroup directory) or reason (why no cgroup).
	LogChosen = "agent process containment"
	// LogOutlived is Warn, at release, when contained processes were still
	// alive after the kill and the wait: mechanism, count, bound, and the
	// cgroup directory left in place.
	LogOutlived = "agent descendants outlived the session"
)

// ReasonOff is the reason recorded when the operator turned containment off.
const ReasonOff = "containment is turned off"

// ReleaseBound bounds release's wait for the killed processes to be gone.
// SIGKILL ends a process within microseconds unless it sleeps
// uninterruptibly in the kernel; the bound keeps StopSession bounded then.
const ReleaseBound = 5 * time.Second

// EnvToken is the environment variable that carries a tracked session's
// token to every descendant of its runtime.
const EnvToken = "ACPKIT_CONTAINMENT"
