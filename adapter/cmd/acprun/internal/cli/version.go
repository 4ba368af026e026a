package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// versionLine names this build: the module version `go install
// …@vX.Y.Z` stamps ("(devel)" for a build from a work tree), the VCS
// revision when the build recorded one, and the Go toolchain.
func versionLine() string {
	version, revision := "(devel)", ""
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				revision = " " + s.Value
			}
		}
	}
	return fmt.Sprintf("acprun %s%s (%s %s/%s)", version, revision, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
