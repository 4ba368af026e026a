// Package schemapin reads schema/pin.json, the pin of the schemas acpsdk's
// generated packages come from, for the tests that assert against it
// rather than against numbers a schema bump changes.
package schemapin

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Surface is one pinned schema file.
type Surface struct {
	// File is the schema's path from the repository root.
	File string `json:"file"`
	// SHA256 is the file's pinned hash, in hex.
	SHA256 string `json:"sha256"`
	// Runtime marks the surface acpsdk's own runtime is built on.
	Runtime bool `json:"runtime"`
}

// Pin is schema/pin.json.
type Pin struct {
	// Package and Version name the npm package the schemas come from.
	Package  string    `json:"package"`
	Version  string    `json:"version"`
	Surfaces []Surface `json:"surfaces"`
}

// ErrNoRuntime is returned when no surface is marked runtime.
var ErrNoRuntime = errors.New("schemapin: schema/pin.json has no runtime surface")

// Read reads the pin below the repository root.
func Read(root string) (Pin, error) {
	var p Pin
	b, err := os.ReadFile(filepath.Join(root, "schema", "pin.json"))
	if err != nil {
		return p, fmt.Errorf("schemapin: %w", err)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("schemapin: schema/pin.json: %w", err)
	}
	return p, nil
}

// Runtime returns the pin and its runtime surface.
func Runtime(root string) (Pin, Surface, error) {
	p, err := Read(root)
	if err != nil {
		return p, Surface{}, err
	}
	for _, s := range p.Surfaces {
		if s.Runtime {
			return p, s, nil
		}
	}
	return p, Surface{}, ErrNoRuntime
}
