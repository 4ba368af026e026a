//go:build !linux

package launch

// becomeSubreaper is Linux-only; elsewhere orphans go to init.
func becomeSubreaper() {}
