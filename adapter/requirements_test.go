package adapter

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"acpkit.dev/internal/reqindex"
)

// The requirement coverage check. REQUIREMENTS.md lists, one line each,
// the spec IDs this module implements and the ones of its sections it
// exempts, with a reason; its top documents the line format. Each listed ID
// needs a test (or fuzz target) whose name cites it without its dash
// (TestLT1_…, TestHS3_…), and each ID a test name cites needs a line, so a
// reader can look it up. When the spec is present beside the repository
// (../shared, as in CI), every ID of the sections this module implements
// must be listed or exempted, under the section that defines it. A clone
// without ../shared checks the file and the tests only. The check itself is
// acpkit.dev/internal/reqindex, which the root module's index uses too.

// reqFile is the module's requirement list, relative to this package.
const reqFile = "REQUIREMENTS.md"

// specPath is <repo>/../shared/spec/adapter.md, relative to this package.
const specPath = "../../shared/spec/adapter.md"

// checkedSections are the spec sections the module implements: all of them
// (§7–§9 with the measurement sources, §21 with the SSH launcher).
var checkedSections = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}

func TestRequirementsCovered(t *testing.T) {
	spec := reqindex.Spec{Path: specPath}
	for _, n := range checkedSections {
		spec.Complete = append(spec.Complete, fmt.Sprintf("§%d", n))
	}
	problems, err := reqindex.Check(reqFile, ".", []reqindex.Spec{spec})
	require.NoError(t, err)
	// Lists that the per-topic contract of one session created; their
	// lines belong in REQUIREMENTS.md.
	for _, pattern := range []string{"*.ids", "exempt.txt"} {
		stray, err := filepath.Glob(filepath.Join("requirements", pattern))
		require.NoError(t, err)
		for _, f := range stray {
			problems = append(problems, "a requirement list outside "+reqFile+" (fold its lines into it and delete it): "+filepath.ToSlash(f))
		}
	}
	for _, p := range problems {
		t.Error(p)
	}
}
