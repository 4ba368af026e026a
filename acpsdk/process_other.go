//go:build !windows

package acpsdk

import "os/exec"

// prepareStart adjusts cmd before it starts; nothing is needed here.
func prepareStart(*exec.Cmd) {}

// finishStart completes a start; nothing is needed here.
func finishStart(*exec.Cmd) error { return nil }
