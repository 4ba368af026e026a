package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// The per-feature golden schemas (testdata/golden/*.json): each exercises
// one construct of the generator (a tagged union, an untagged branch, an
// open enum, a leniency keyword…), and its generated types.go and codec.go
// are committed beside it, so a change to one emitter shows up as a small
// readable diff there. TestGolden regenerates and compares them, and
// TestSDK1_GoldenOutputsCompile compiles and vets each as a package under
// acpsdk and round-trips its fixtures (NAME.fixtures beside the schema);
//
//	go run ./tools/gen -schema tools/gen/testdata/golden/NAME.json -pkg golden -out tools/gen/testdata/golden/NAME
//
// rewrites one (from the repository root).

// generateCodec produces the types and codec of the schema file (no pin,
// no methods: only what the file's defs need) as package pkg.
func generateCodec(file, pkg string) (map[string][]byte, error) {
	e, err := schemaEmitter(file, pkg, "")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for name, print := range map[string]func(*printer) error{"types.go": e.types, "codec.go": e.codec} {
		g := newPrinter()
		if err := print(g); err != nil {
			return nil, err
		}
		if out[name], err = e.render(e.packageFile(pkg), g); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return out, nil
}

// schemaEmitter builds the model of the schema file (no pin, no methods)
// and an emitter for it as package pkg at import path pkgPath (by default
// acpkit.dev/golden/pkg: the package's own code never names its path).
func schemaEmitter(file, pkg, pkgPath string) (*emitter, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	surf := &Surface{File: filepath.ToSlash(filepath.Base(file)), Go: "golden/" + pkg}
	pin := Pin{Package: "golden", Version: "schema", Surfaces: []*Surface{surf}}
	sf, err := parseSchema(pin, surf, hex.EncodeToString(sum[:]), 1, data)
	if err != nil {
		return nil, err
	}
	m, err := buildModel(sf)
	if err != nil {
		return nil, err
	}
	if pkgPath == "" {
		pkgPath = surf.ImportPath()
	}
	return newEmitter(m, pkgPath), nil
}

// runSchema writes (or with check, compares) the codec of one schema file
// into dir.
func runSchema(file, pkg, dir string, check bool) error {
	if pkg == "" || dir == "" {
		return fmt.Errorf("-schema needs -pkg and -out")
	}
	files, err := generateCodec(file, pkg)
	if err != nil {
		return err
	}
	if check {
		var stale []string
		for name, content := range files {
			have, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || !bytes.Equal(have, content) {
				stale = append(stale, name)
			}
		}
		sort.Strings(stale)
		if len(stale) > 0 {
			return fmt.Errorf("%s: generated code is stale. Differs: %v", dir, stale)
		}
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return err
		}
	}
	return nil
}
