package adapter_test

import (
	"fmt"

	"acpkit.dev/adapter"
)

// An orchestrator that runs as root gets a cgroup per session; one that
// runs in a systemd unit with Delegate=yes names nothing either, and one
// that was given a cgroup of its own names it. Containment is on unless
// turned off; an unknown value is refused before any session starts.
func ExampleWithContainment() {
	_, err := adapter.New(nil, adapter.WithCgroupParent("/sys/fs/cgroup/sortie.slice/sessions"))
	fmt.Println("delegated cgroup:", err)
	_, err = adapter.New(nil, adapter.WithContainment(adapter.ContainmentOff))
	fmt.Println("off:", err)
	_, err = adapter.New(nil, adapter.WithContainment("always"))
	fmt.Println("unknown:", err)
	// Output:
	// delegated cgroup: <nil>
	// off: <nil>
	// unknown: unknown containment "always": want one of auto, tracked, off
}
