package measure

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readAll reads l's new lines of path with a fresh budget.
func readAll(l *Lines, path string) []string {
	budget := int64(DrainBound)
	var out []string
	l.Read(path, &budget, func(b []byte) { out = append(out, string(b)) })
	return out
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func TestMS16_LinesHandsOnWholeLinesOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	var l Lines
	assert.Empty(t, readAll(&l, path), "a file not created yet reads as empty")
	appendTo(t, path, "{\"a\":1}\n{\"b\":2}\r\n{\"c\":")
	assert.Equal(t, []string{`{"a":1}`, `{"b":2}`}, readAll(&l, path), "the half-written last line waits")
	assert.Empty(t, readAll(&l, path))
	appendTo(t, path, "3}\n")
	assert.Equal(t, []string{`{"c":3}`}, readAll(&l, path), "read whole once finished")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, fi.Size(), l.Pos())
}

func TestMS16_LinesRereadsARotatedOrTruncatedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log.jsonl")
	var l Lines
	appendTo(t, path, "one\ntwo\n")
	assert.Len(t, readAll(&l, path), 2)

	// Replaced by a new file of the same name, longer than the old one.
	next := filepath.Join(dir, "next")
	appendTo(t, next, "one\ntwo\nthree\n")
	require.NoError(t, os.Rename(next, path))
	assert.Equal(t, []string{"one", "two", "three"}, readAll(&l, path), "a new file is read from its start")

	require.NoError(t, os.Truncate(path, 4))
	assert.Equal(t, []string{"one"}, readAll(&l, path), "a file that shrank is read from its start")
}

func TestMS16_LinesSkipsALineOverTheBoundWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	const bound = 100 << 10 // over bufio's 64 KiB, as LineBound is
	long := strings.Repeat("x", bound+1)
	appendTo(t, path, "before\n"+long[:bound/2])
	l := Lines{bound: bound}
	assert.Equal(t, []string{"before"}, readAll(&l, path))
	appendTo(t, path, long[bound/2:]+"\nafter\n")
	assert.Equal(t, []string{"after"}, readAll(&l, path), "the long line is skipped, even read in two parts")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, fi.Size(), l.Pos())

	// A line of exactly the bound is a line.
	exact := strings.Repeat("y", bound)
	appendTo(t, path, exact+"\n")
	got := readAll(&l, path)
	require.Len(t, got, 1)
	assert.Len(t, got[0], bound)
}

func TestMS16_LinesReadsAtMostTheBudgetPerDrain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	appendTo(t, path, strings.Repeat("0123456789\n", 10))
	var l Lines
	budget := int64(35)
	var got []string
	l.Read(path, &budget, func(b []byte) { got = append(got, string(b)) })
	assert.Len(t, got, 3, "35 bytes hold three whole lines of 11")
	assert.Zero(t, budget)
	assert.Equal(t, int64(33), l.Pos())
	l.Read(path, &budget, func(b []byte) { got = append(got, string(b)) })
	assert.Len(t, got, 3, "an empty budget reads nothing")
	assert.Len(t, readAll(&l, path), 7, "the rest with the next drain's budget")
}

func TestMS16_ReadTailLeavesWhatWasWrittenBefore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	appendTo(t, path, "old1\nold2\nhalf")
	var l Lines
	var seen []string
	l.ReadTail(path, func(b []byte) { seen = append(seen, string(b)) })
	assert.Equal(t, []string{"old1", "old2"}, seen)
	appendTo(t, path, "-done\nnew\n")
	assert.Equal(t, []string{"-done", "new"}, readAll(&l, path), "only what came after; the rest of a half line is not a record")

	var none Lines
	none.ReadTail(filepath.Join(t.TempDir(), "absent"), func([]byte) { t.Fatal("no file, no line") })
	assert.Zero(t, none.Pos())
}

func FuzzMS16_Lines(f *testing.F) {
	f.Add([]byte("a\nb\r\nc"), uint16(3))
	f.Add([]byte("\n\n\n"), uint16(1))
	f.Add([]byte("no newline at all"), uint16(100))
	f.Add([]byte("a line well over the bound of sixteen\nshort\n"), uint16(20))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		path := filepath.Join(t.TempDir(), "log")
		at := int(cut) % (len(data) + 1)
		if err := os.WriteFile(path, data[:at], 0o600); err != nil {
			t.Fatal(err)
		}
		l := Lines{bound: 16}
		var got [][]byte
		keep := func(b []byte) { got = append(got, bytes.Clone(b)) }
		budget := int64(DrainBound)
		l.Read(path, &budget, keep)
		appendTo(t, path, string(data[at:]))
		l.Read(path, &budget, keep)
		// Every whole line within the bound is handed on exactly once, in
		// order, however the file was cut while it was written.
		var want [][]byte
		lines := bytes.SplitAfter(data, []byte("\n"))
		for _, line := range lines {
			if bytes.HasSuffix(line, []byte("\n")) && len(line) <= l.bound+1 {
				want = append(want, bytes.TrimRight(line, "\r\n"))
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%d lines, want %d", len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("line %d: %q, want %q", i, got[i], want[i])
			}
		}
		if l.Pos() > int64(len(data)) {
			t.Fatalf("position %d past the file's %d bytes", l.Pos(), len(data))
		}
	})
}
