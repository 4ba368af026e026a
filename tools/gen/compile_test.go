package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSDK1_EverySurfaceCompiles regenerates every pinned surface from its
// schema and type-checks the result (go vet, tests included) in place of
// the committed package, through a build overlay, so that a schema bump
// fails here, with the generator's message or the compiler's, before
// anything is committed. The overlay puts the regenerated files at the
// packages' own paths, which is what lets them import acpsdk's internal
// packages as the committed ones do.
func TestSDK1_EverySurfaceCompiles(t *testing.T) {
	pkgs, err := generated()
	if err != nil {
		t.Fatalf("generation fails: %v", err)
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	replace := map[string]string{}
	var paths []string
	for i, p := range pkgs {
		dir := filepath.Join(root, filepath.FromSlash(p.surface.Go))
		// Committed generated files the regeneration drops are hidden.
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
		paths = append(paths, p.surface.ImportPath())
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	ovl := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovl, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd := exec.Command("go", append([]string{"vet", "-overlay", ovl}, paths...)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the regenerated surfaces do not compile: %v\n%s", err, out)
	}
	t.Logf("go vet of %d regenerated surfaces: %v", len(paths), time.Since(start).Round(time.Millisecond))
}
