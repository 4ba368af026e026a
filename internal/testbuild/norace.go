//go:build !race

package testbuild

const raceEnabled = false
