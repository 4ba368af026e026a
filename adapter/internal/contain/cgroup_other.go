//go:build !linux

package contain

import (
	"errors"
	"syscall"
	"time"
)

// cgroup is Linux's; elsewhere none can be created.
type cgroup struct{ dir string }

func newCgroup(string) (*cgroup, error) { return nil, errors.New("no cgroups on this platform") }

// Apply does nothing: there is no cgroup to start in.
func (s *Setup) Apply(*syscall.SysProcAttr) {}

func (*cgroup) closeFD()                           {}
func (*cgroup) kill() error                        { return nil }
func (*cgroup) awaitEmpty(time.Time) (bool, error) { return true, nil }
func (*cgroup) remove() error                      { return nil }
