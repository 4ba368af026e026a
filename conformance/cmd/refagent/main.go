// Command refagent is the deterministic reference ACP agent. Its flags and
// prompt words are documented in package acpkit.dev/conformance/refagent.
package main

import (
	"os"

	"acpkit.dev/conformance/refagent"
)

func main() { os.Exit(refagent.Main(os.Args[1:])) }
