package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSDK1_EverySurfaceCompiles regenerates every pinned surface from its
// schema and type-checks the result (go vet, tests included) in place of
// the committed package, so that a schema bump fails here, with the
// generator's message or the compiler's, before anything is committed.
func TestSDK1_EverySurfaceCompiles(t *testing.T) {
	surfaces, err := generated()
	if err != nil {
		t.Fatalf("generation fails: %v", err)
	}
	var pkgs []genPkg
	for _, p := range surfaces {
		pkgs = append(pkgs, genPkg{importPath: p.surface.ImportPath(), files: p.files})
	}
	start := time.Now()
	if out, err := goOnGenerated(t, pkgs, []string{"vet"}); err != nil {
		t.Fatalf("the regenerated surfaces do not compile: %v\n%s", err, out)
	}
	t.Logf("go vet of %d regenerated surfaces: %v", len(pkgs), time.Since(start).Round(time.Millisecond))
}

// genPkg is a generated package to compile: its import path and its files
// by name.
type genPkg struct {
	importPath string
	files      map[string][]byte
}

// scratchModule is the module of generated packages that have no directory
// in the repository (the goldens): a path under acpkit.dev/acpsdk, so that
// they may import acpsdk's internal packages as the surfaces do.
const scratchModule = "acpkit.dev/acpsdk/internal/scratch"

// goOnGenerated runs, from the repository root, each go command of cmds
// (e.g. {"vet"}) on pkgs, every package at its own import path as if it
// were committed there — which is what lets generated code import
// acpsdk's internal packages. A package of the repository replaces its
// committed generated files through a build overlay (committed generated
// files it no longer produces are hidden); a package under scratchModule is
// written to that module in a temporary directory, which a temporary
// workspace puts beside the repository's module (go vet and go test need
// a package's directory to exist, which an overlay cannot make).
func goOnGenerated(t *testing.T, pkgs []genPkg, cmds ...[]string) ([]byte, error) {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	scratch := filepath.Join(tmp, "scratch")
	replace := map[string]string{}
	var paths []string
	env := os.Environ()
	for i, p := range pkgs {
		paths = append(paths, p.importPath)
		if rel, ok := strings.CutPrefix(p.importPath, scratchModule+"/"); ok {
			dir := filepath.Join(scratch, filepath.FromSlash(rel))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, content := range p.files {
				if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		rel, ok := strings.CutPrefix(p.importPath, "acpkit.dev/")
		if !ok {
			t.Fatalf("%s is not a package of the repository's module", p.importPath)
		}
		dir := filepath.Join(root, filepath.FromSlash(rel))
		old, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range old {
			if isGenerated(f) {
				replace[f] = ""
			}
		}
		for name, content := range p.files {
			file := filepath.Join(tmp, strings.Repeat("x", i+1)+"_"+name)
			if err := os.WriteFile(file, content, 0o644); err != nil {
				t.Fatal(err)
			}
			replace[filepath.Join(dir, name)] = file
		}
	}
	if _, err := os.Stat(scratch); err == nil {
		mod := fmt.Sprintf("module %s\n\ngo 1.26\n", scratchModule)
		if err := os.WriteFile(filepath.Join(scratch, "go.mod"), []byte(mod), 0o644); err != nil {
			t.Fatal(err)
		}
		work := fmt.Sprintf("go 1.26.0\n\nuse (\n\t%s\n\t%s\n)\n", root, scratch)
		if err := os.WriteFile(filepath.Join(tmp, "go.work"), []byte(work), 0o644); err != nil {
			t.Fatal(err)
		}
		env = append(env, "GOWORK="+filepath.Join(tmp, "go.work"))
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	ovl := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovl, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, c := range cmds {
		args := append(append(append([]string{}, c[0], "-overlay", ovl), c[1:]...), paths...)
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = root, env
		out, err := cmd.CombinedOutput()
		all = append(all, out...)
		if err != nil {
			return all, fmt.Errorf("go %s: %w", strings.Join(c, " "), err)
		}
	}
	return all, nil
}
