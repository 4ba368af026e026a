// Package clitest holds the golden-file and JSON-line helpers that acprun's
// unit and end-to-end tests share. Only test binaries import it, so its
// -update flag appears in those alone.
package clitest

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Golden compares got with testdata/name, rewriting the file under -update.
func Golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create %s", path)
	assert.Equal(t, string(want), string(got))
}

// JSONLines decodes every line of out as a JSON object.
func JSONLines(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "not JSON: %q", sc.Text())
		lines = append(lines, m)
	}
	return lines
}
