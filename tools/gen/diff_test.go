package main

import (
	"strings"
	"testing"
)

// TestUnifiedDiff: check-generated shows what differs, as a unified diff
// with context, not only which file.
func TestUnifiedDiff(t *testing.T) {
	var a, b []string
	for i := range 20 {
		a = append(a, "line "+string(rune('a'+i)))
	}
	b = append(b, a...)
	b[9] = "changed"
	b = append(b[:15], append([]string{"inserted"}, b[15:]...)...)
	got := unifiedDiff("acpsdk/gen/x.go", []byte(strings.Join(a, "\n")+"\n"), []byte(strings.Join(b, "\n")+"\n"))
	want := `--- acpsdk/gen/x.go (committed)
+++ acpsdk/gen/x.go (generated)
@@ -7,12 +7,13 @@
 line g
 line h
 line i
-line j
+changed
 line k
 line l
 line m
 line n
 line o
+inserted
 line p
 line q
 line r
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := unifiedDiff("f", nil, []byte("x\n")); !strings.Contains(got, "@@ -1,0 +1,1 @@\n+x\n") {
		t.Errorf("a new file: %q", got)
	}
	if got := unifiedDiff("f", []byte("x\n"), nil); !strings.Contains(got, "@@ -1,1 +1,0 @@\n-x\n") {
		t.Errorf("a removed file: %q", got)
	}
	if got := unifiedDiff("f", []byte("same\n"), []byte("same\n")); strings.Contains(got, "@@") {
		t.Errorf("no change shows a hunk: %q", got)
	}
}
