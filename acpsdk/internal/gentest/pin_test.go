package gentest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/internal/schemapin"
)

// pinned is what schema/pin.json and the schema file acpsdk/gen is
// generated from say, so that tests assert against them rather than
// against numbers that a schema bump changes.
type pinned struct {
	Package, Version, File, SHA256 string
	// MethodDefs is how many defs carry x-method; Sides counts the
	// methods (wire name and kind) per x-side.
	MethodDefs int
	Sides      map[string]int
}

func readPinned(t *testing.T) pinned {
	t.Helper()
	root := filepath.Join("..", "..", "..")
	pin, surface, err := schemapin.Runtime(root)
	require.NoError(t, err)
	p := pinned{Package: pin.Package, Version: pin.Version, File: surface.File, SHA256: surface.SHA256, Sides: map[string]int{}}
	data, err := os.ReadFile(filepath.Join(root, p.File))
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	require.Equal(t, p.SHA256, hex.EncodeToString(sum[:]), "%s is the pinned file", p.File)
	var doc struct {
		Defs map[string]struct {
			Method string `json:"x-method"`
			Side   string `json:"x-side"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	methods := map[string]string{}
	for name, d := range doc.Defs {
		if d.Method == "" {
			continue
		}
		p.MethodDefs++
		kind := "request"
		if len(name) > len("Notification") && name[len(name)-len("Notification"):] == "Notification" {
			kind = "notification"
		}
		methods[d.Method+" "+d.Side+" "+kind] = d.Side
	}
	for _, side := range methods {
		p.Sides[side]++
	}
	return p
}
