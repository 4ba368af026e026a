package main

import (
	"fmt"
	"strings"
)

// maxDiffEdits bounds the work of unifiedDiff (Myers' algorithm is
// O((N+M)·D)); a larger difference is summarized instead of shown.
const maxDiffEdits = 1000

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 3

// unifiedDiff renders the difference between the committed file (have,
// empty when absent) and the regenerated one (want, nil when it would be
// removed) in unified format, for `gen -check`.
func unifiedDiff(name string, have, want []byte) string {
	a, b := splitLines(have), splitLines(want)
	var hdr strings.Builder
	fmt.Fprintf(&hdr, "--- %s (committed)\n+++ %s (generated)\n", name, name)
	ops, ok := editScript(a, b)
	if !ok {
		fmt.Fprintf(&hdr, "@@ %d lines committed, %d generated: more than %d lines differ @@\n", len(a), len(b), maxDiffEdits)
		return hdr.String()
	}
	// Group the script into hunks of changes with diffContext lines around.
	var out strings.Builder
	out.WriteString(hdr.String())
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-diffContext, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(end+diffContext, len(ops))
				break
			}
			end = run
		}
		h := ops[start:end]
		aStart, bStart, aLen, bLen := h[0].a, h[0].b, 0, 0
		for _, op := range h {
			if op.kind != '+' {
				aLen++
			}
			if op.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", aStart+1, aLen, bStart+1, bLen)
		for _, op := range h {
			line := b[op.b:]
			if op.kind == '-' || op.kind == ' ' {
				line = a[op.a:]
			}
			out.WriteByte(op.kind)
			out.WriteString(line[0])
			out.WriteByte('\n')
		}
		i = end
	}
	return out.String()
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// edit is one line of an edit script: kind ' ' keeps a[a] (= b[b]), '-'
// drops a[a], '+' inserts b[b].
type edit struct {
	kind byte
	a, b int
}

// editScript is Myers' shortest edit script from a to b; ok is false when
// it needs more than maxDiffEdits edits.
func editScript(a, b []string) ([]edit, bool) {
	n, m := len(a), len(b)
	offset := n + m + 1
	v := make([]int, 2*offset+1)
	var trace [][]int
	found := false
	for d := 0; d <= n+m && d <= maxDiffEdits; d++ {
		// Only diagonals -d..d are read back for this round.
		trace = append(trace, append([]int(nil), v[offset-d:offset+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
				x = v[offset+k+1]
			} else {
				x = v[offset+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[offset+k] = x
			if x >= n && y >= m {
				found = true
				break
			}
		}
		if found {
			break
		}
	}
	if !found {
		return nil, false
	}
	// Walk the trace back from (n, m).
	var rev []edit
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		v := trace[d] // diagonal k is v[d+k]
		k := x - y
		var prevK int
		if d == 0 {
			prevK = 0
		} else if k == -d || (k != d && v[d+k-1] < v[d+k+1]) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX, prevY := 0, 0 // round 0 starts at the origin
		if d > 0 {
			prevX = v[d+prevK]
			prevY = prevX - prevK
		}
		for x > prevX && y > prevY {
			x, y = x-1, y-1
			rev = append(rev, edit{' ', x, y})
		}
		if d > 0 {
			if x == prevX {
				y--
				rev = append(rev, edit{'+', x, y})
			} else {
				x--
				rev = append(rev, edit{'-', x, y})
			}
		}
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev, true
}
