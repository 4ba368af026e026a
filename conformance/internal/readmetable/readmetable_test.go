package readmetable_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/conformance/internal/readmetable"
)

const begin, end = "<!-- BEGIN t -->", "<!-- END t -->"

func TestSyncReportsThenRewritesTheTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	require.NoError(t, os.WriteFile(path, []byte("intro\n"+begin+"\n| old |\n"+end+"\noutro\n"), 0o644))
	current, err := readmetable.Sync(path, begin, end, "| new |\n", false)
	require.NoError(t, err)
	assert.Equal(t, "| old |\n", current)

	_, err = readmetable.Sync(path, begin, end, "| new |\n| rows |\n", true)
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "intro\n"+begin+"\n| new |\n| rows |\n"+end+"\noutro\n", string(b))
}

func TestSyncNeedsTheMarkers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	require.NoError(t, os.WriteFile(path, []byte("no markers\n"), 0o644))
	_, err := readmetable.Sync(path, begin, end, "", false)
	require.ErrorIs(t, err, readmetable.ErrMarkers)
}
