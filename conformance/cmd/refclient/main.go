// Command refclient is the reference ACP client, which misbehaves on
// demand. Its flags are documented in package
// acpkit.dev/conformance/refclient.
package main

import (
	"os"

	"acpkit.dev/conformance/refclient"
)

func main() { os.Exit(refclient.Main(os.Args[1:], os.Stdout, os.Stderr)) }
