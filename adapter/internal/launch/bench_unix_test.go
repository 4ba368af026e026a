//go:build unix

package launch

import (
	"os/exec"
	"testing"
)

// BenchmarkLocalLaunchAndReap is a full local launch of /bin/true: three
// pipes, a new process group, containment (as root a cgroup, made and
// removed), the reap, closing the read ends.
func BenchmarkLocalLaunchAndReap(b *testing.B) {
	dir := b.TempDir()
	spec := Spec{Program: "/bin/true", Dir: dir}
	for b.Loop() {
		p, err := Local{}.Launch(b.Context(), spec)
		if err != nil {
			b.Fatal(err)
		}
		<-p.Exited()
		p.CloseStdin()
		_ = p.Stdout().Close()
		_ = p.Stderr().Close()
		p.Release()
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
