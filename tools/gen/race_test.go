//go:build race

package main

// raceFlags make the go commands the tests run build as this test binary
// was built (see goOnGenerated).
var raceFlags = []string{"-race"}
