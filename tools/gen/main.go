// Command gen generates acpkit.dev/acpsdk/gen from the pinned ACP JSON
// Schema (schema/pin.json names it, its sha256 is checked).
//
// Usage, from the repository root:
//
//	go run ./tools/gen          # write acpsdk/gen
//	go run ./tools/gen -check   # regenerate in memory; fail naming stale files
//	go run ./tools/gen -schema F.json -pkg P -out DIR   # one schema's codec (golden tests)
//
// `go generate ./acpsdk/gen/...` runs it through the //go:generate line in
// acpsdk/gen/doc.go.
//
// The pipeline: load (go-jsonschema's model plus a raw pass for x-*
// keywords and member order), resolve into a model where every Go name and
// codec decision is made, then emit with jennifer. Output is deterministic.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	root := flag.String("root", ".", "repository root (holds schema/ and acpsdk/)")
	check := flag.Bool("check", false, "regenerate in memory and fail if acpsdk/gen differs")
	schema := flag.String("schema", "", "generate only the types and codec of this schema file (no pin), into -out as package -pkg")
	pkg := flag.String("pkg", "", "with -schema: the package name")
	out := flag.String("out", "", "with -schema: the output directory")
	flag.Parse()
	err := error(nil)
	if *schema != "" {
		err = runSchema(*schema, *pkg, *out, *check)
	} else {
		err = run(*root, *check)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// outDir is where the generated package lives, relative to the root.
const outDir = "acpsdk/gen"

func run(root string, check bool) error {
	files, err := generate(root)
	if err != nil {
		return err
	}
	dir := filepath.Join(root, filepath.FromSlash(outDir))
	if check {
		stale, err := diff(dir, files)
		if err != nil {
			return err
		}
		if len(stale) > 0 {
			return fmt.Errorf("generated code is stale; run make generate. Differs: %v", stale)
		}
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Remove generated files that are no longer produced.
	old, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	for _, p := range old {
		if _, ok := files[filepath.Base(p)]; !ok && isGenerated(p) {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// generate produces every file of acpsdk/gen, by name.
func generate(root string) (map[string][]byte, error) {
	sf, err := loadSchema(root)
	if err != nil {
		return nil, err
	}
	m, err := buildModel(sf)
	if err != nil {
		return nil, err
	}
	return emit(m)
}

// diff lists files whose content differs from want, plus generated files
// on disk that would no longer be produced.
func diff(dir string, want map[string][]byte) ([]string, error) {
	var stale []string
	for name, content := range want {
		have, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(have, content) {
			stale = append(stale, name)
		}
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	for _, p := range old {
		if _, ok := want[filepath.Base(p)]; !ok && isGenerated(p) {
			stale = append(stale, filepath.Base(p)+" (no longer generated)")
		}
	}
	sort.Strings(stale)
	return stale, nil
}

func isGenerated(path string) bool {
	b, err := os.ReadFile(path)
	return err == nil && bytes.HasPrefix(b, []byte(headerPrefix))
}
