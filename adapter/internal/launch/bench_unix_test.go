//go:build unix

package launch

import (
	"os/exec"
	"testing"

	"acpkit.dev/adapter/internal/contain"
)

// BenchmarkLocalLaunchAndReap is a full local launch of /bin/true: three
// pipes, a new process group, the reap, closing the read ends, and the
// release, under each containment mode (auto is a cgroup made and removed
// where this process may make one, as root).
func BenchmarkLocalLaunchAndReap(b *testing.B) {
	dir := b.TempDir()
	for _, mode := range contain.Modes {
		b.Run(string(mode), func(b *testing.B) {
			spec := Spec{Program: "/bin/true", Dir: dir, Contain: contain.Config{Mode: mode}}
			for b.Loop() {
				p, err := Local{}.Launch(b.Context(), spec)
				if err != nil {
					b.Fatal(err)
				}
				<-p.Exited()
				p.CloseStdin()
				_ = p.Stdout().Close()
				_ = p.Stderr().Close()
				p.Kill()
				p.Release()
			}
		})
	}
}

// BenchmarkExecRunBaseline is the same program through os/exec with no
// pipes: the floor the launcher is compared against.
func BenchmarkExecRunBaseline(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		cmd := exec.Command("/bin/true")
		cmd.Dir = dir
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}
