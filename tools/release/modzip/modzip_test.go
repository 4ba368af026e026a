package modzip

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadLeavesNestedModulesOut(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"go.mod": "module example.com/a\n\ngo 1.26\n\nrequire (\n\texample.com/b v1.2.3 // indirect\n)\nrequire example.com/c v0.1.0\n"})
	m, err := Read(dir, []string{"go.mod", "a.go", "sub/x.go", "nested/go.mod", "nested/n.go", "nested/deep/d.go"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.Files, ","); got != "a.go,go.mod,sub/x.go" {
		t.Errorf("files %s", got)
	}
	if m.Path != "example.com/a" || m.Requires["example.com/b"] != "v1.2.3" || m.Requires["example.com/c"] != "v0.1.0" {
		t.Errorf("parsed %s %v", m.Path, m.Requires)
	}
}

// TestTheGoCommandAcceptsTheRelease builds a module that requires a
// release cut here, with only the go.sum lines AddSums writes: the go
// command checks both hashes against the proxy's files, so a wrong hash is
// a checksum mismatch.
func TestTheGoCommandAcceptsTheRelease(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root := t.TempDir()
	lib, app, proxy := filepath.Join(root, "lib"), filepath.Join(root, "app"), filepath.Join(root, "proxy")
	write(t, lib, map[string]string{
		"go.mod": "module example.com/lib\n\ngo 1.26\n",
		"lib.go": "package lib\n\n// Answer is the answer.\nconst Answer = 42\n",
	})
	write(t, app, map[string]string{
		"go.mod":  "module example.com/app\n\ngo 1.26\n\nrequire example.com/lib v1.0.0\n",
		"main.go": "package main\n\nimport \"example.com/lib\"\n\nfunc main() { println(lib.Answer) }\n",
	})
	m, err := Read(lib, []string{"go.mod", "lib.go"})
	if err != nil {
		t.Fatal(err)
	}
	rel, err := m.WriteProxy(proxy, "v1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	a, err := Read(app, []string{"go.mod", "main.go"})
	if err != nil {
		t.Fatal(err)
	}
	a.AddSums("v1.0.0", []Release{rel})
	sum, err := a.content("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	write(t, app, map[string]string{"go.sum": string(sum)})
	cmd := exec.Command("go", "build", "-o", filepath.Join(root, "app.bin"), ".")
	cmd.Dir = app
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly -modcacherw", "GOPROXY=file://"+filepath.ToSlash(proxy),
		"GOSUMDB=off", "GOPATH="+filepath.Join(root, "gopath"), "GOMODCACHE="+filepath.Join(root, "gopath", "mod"), "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build against the release: %v\n%s", err, out)
	}
}
