// Package readmetable keeps a table a test generates inside a README in
// step with the run that generated it: the table sits between two marker
// lines, a test rewrites it under -update and otherwise fails when it is
// stale.
package readmetable

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrMarkers is the kind of the error for a README without the markers.
var ErrMarkers = errors.New("readmetable: markers not found")

// Sync compares the text between the lines begin and end of the file at
// path with table. With update it writes table there and returns ""; else
// it returns the text now there, for the caller to compare with table.
func Sync(path, begin, end, table string, update bool) (current string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	text := string(b)
	i := strings.Index(text, begin+"\n")
	j := strings.Index(text, "\n"+end)
	if i < 0 || j < i {
		return "", fmt.Errorf("%w: %s needs a line %q and, after it, a line %q", ErrMarkers, path, begin, end)
	}
	start := i + len(begin) + 1
	current = text[start : j+1]
	if !update {
		return current, nil
	}
	return "", os.WriteFile(path, []byte(text[:start]+table+text[j+1:]), 0o644)
}
