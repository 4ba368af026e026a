package adapter

import (
	"bufio"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The requirement coverage check. requirements/*.ids list the spec IDs
// this module implements; each needs a test (or fuzz target) whose name
// cites it without its dash (TestLT1_…, TestHS3_…). When the spec is
// present beside the repository (../shared, as in CI), every ID of the
// sections this module implements must be listed or exempted with a
// reason in requirements/exempt.txt. A clone without ../shared checks only
// the lists.

// specPath is <repo>/../shared/spec/adapter.md, relative to this package.
const specPath = "../../shared/spec/adapter.md"

// checkedSections are the spec sections the module implements (issue #6,
// and §7–§9 with issue #12): §1–§20, §22–§24. §21 is a seam for a later
// issue.
var checkedSections = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 22, 23, 24}

func TestRequirementsCovered(t *testing.T) {
	problems, err := coverageProblems("requirements", ".", specPath)
	require.NoError(t, err)
	for _, p := range problems {
		t.Error(p)
	}
}

// coverageProblems runs the check: the ID lists in reqDir, the tests of
// the module at root, and the spec at spec when that file exists.
func coverageProblems(reqDir, root, spec string) ([]string, error) {
	listed, err := readIDLists(reqDir)
	if err != nil {
		return nil, err
	}
	if len(listed) == 0 {
		return nil, fmt.Errorf("no requirement IDs listed in %s/*.ids", reqDir)
	}
	exempt, err := readExemptions(filepath.Join(reqDir, "exempt.txt"))
	if err != nil {
		return nil, err
	}
	names, err := testNames(root)
	if err != nil {
		return nil, err
	}
	var problems []string
	report := func(what string, ids []string) {
		if len(ids) > 0 {
			problems = append(problems, what+": "+strings.Join(ids, ", "))
		}
	}

	var untested, both []string
	for _, id := range sortedKeys(listed) {
		if !citedBy(id, names) {
			untested = append(untested, id+" ("+listed[id]+")")
		}
		if _, ok := exempt[id]; ok {
			both = append(both, id)
		}
	}
	report("listed IDs without a test whose name cites them (LT-1 -> TestLT1_...)", untested)
	report("IDs both listed and exempted", both)

	data, err := os.ReadFile(spec)
	if errors.Is(err, fs.ErrNotExist) {
		return problems, nil // a clone without ../shared checks the lists only
	}
	if err != nil {
		return nil, err
	}
	bySection := specIDs(string(data))
	all := map[string]bool{}
	for _, ids := range bySection {
		for _, id := range ids {
			all[id] = true
		}
	}
	var unlisted, unknown []string
	for _, sec := range checkedSections {
		for _, id := range bySection[sec] {
			_, isListed := listed[id]
			_, isExempt := exempt[id]
			if !isListed && !isExempt {
				unlisted = append(unlisted, fmt.Sprintf("§%d %s", sec, id))
			}
		}
	}
	for _, id := range sortedKeys(listed) {
		if !all[id] {
			unknown = append(unknown, id+" ("+listed[id]+")")
		}
	}
	for _, id := range sortedKeys(exempt) {
		if !all[id] {
			unknown = append(unknown, id+" (exempt.txt)")
		}
	}
	report("spec IDs of the implemented sections that no requirements/*.ids lists and exempt.txt does not exempt", unlisted)
	report("listed or exempted IDs the spec does not define", unknown)
	return problems, nil
}

// idPattern is one requirement ID.
var idPattern = regexp.MustCompile(`^[A-Z]+-[0-9]+$`)

// readIDLists reads every dir/*.ids: one ID per line, # comments. It maps
// each ID to the files listing it; an ID listed twice in one file is an
// error.
func readIDLists(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.ids"))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, f := range files {
		inFile := map[string]bool{}
		err := eachLine(f, func(n int, line string) error {
			if !idPattern.MatchString(line) {
				return fmt.Errorf("%s:%d: %q is not a requirement ID", f, n, line)
			}
			if inFile[line] {
				return fmt.Errorf("%s:%d: %s listed twice", f, n, line)
			}
			inFile[line] = true
			// Two layers may share an ID (the process primitive and the
			// teardown step that uses it); either list names it.
			if prev, ok := out[line]; ok {
				out[line] = prev + ", " + filepath.Base(f)
			} else {
				out[line] = filepath.Base(f)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readExemptions reads "ID: reason" lines; the reason is required.
func readExemptions(path string) (map[string]string, error) {
	out := map[string]string{}
	err := eachLine(path, func(n int, line string) error {
		id, reason, _ := strings.Cut(line, ":")
		id, reason = strings.TrimSpace(id), strings.TrimSpace(reason)
		if !idPattern.MatchString(id) || reason == "" {
			return fmt.Errorf("%s:%d: want \"ID: reason\", got %q", path, n, line)
		}
		if _, dup := out[id]; dup {
			return fmt.Errorf("%s:%d: %s exempted twice", path, n, id)
		}
		out[id] = reason
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	return out, err
}

// eachLine calls fn with every non-blank, non-comment line, trimmed.
func eachLine(path string, fn func(n int, line string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line != "" {
			if err := fn(n, line); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

// testNames returns the names of every Test, Fuzz and Benchmark function in
// the module's _test.go files under root.
func testNames(root string) ([]string, error) {
	var names []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil {
				continue
			}
			for _, prefix := range []string{"Test", "Fuzz", "Benchmark"} {
				if strings.HasPrefix(fn.Name.Name, prefix) {
					names = append(names, fn.Name.Name)
				}
			}
		}
		return nil
	})
	return names, err
}

// citedBy reports whether a name cites id: its dashless form appears with
// no capital letter right before it and no digit right after, so LT1 is
// not cited by TestLT12_… nor SS2 by TestSSS2_….
func citedBy(id string, names []string) bool {
	tok := strings.ReplaceAll(id, "-", "")
	for _, name := range names {
		for i := 0; ; {
			j := strings.Index(name[i:], tok)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(tok)
			before := start == 0 || !(name[start-1] >= 'A' && name[start-1] <= 'Z')
			after := end == len(name) || !(name[end] >= '0' && name[end] <= '9')
			if before && after {
				return true
			}
			i = start + 1
		}
	}
	return false
}

var (
	sectionHeading = regexp.MustCompile(`^## ([0-9]+)\.`)
	// A requirement is defined in bold at a bullet (**LT-1**) or as the
	// first cell of a table row (| LOG-1 |).
	boldID  = regexp.MustCompile(`\*\*([A-Z]+-[0-9]+)\*\*`)
	tableID = regexp.MustCompile(`^\|\s*([A-Z]+-[0-9]+)\s*\|`)
)

// specIDs maps section number to the IDs defined in it, in order.
func specIDs(spec string) map[int][]string {
	out := map[int][]string{}
	sec := 0
	for line := range strings.Lines(spec) {
		if m := sectionHeading.FindStringSubmatch(line); m != nil {
			sec, _ = strconv.Atoi(m[1])
			continue
		}
		for _, m := range boldID.FindAllStringSubmatch(line, -1) {
			out[sec] = append(out[sec], m[1])
		}
		if m := tableID.FindStringSubmatch(line); m != nil {
			out[sec] = append(out[sec], m[1])
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestRequirementsCheckCatchesGaps holds the check's own parts to their
// job, so a broken check cannot pass silently.
func TestRequirementsCheckCatchesGaps(t *testing.T) {
	names := []string{"TestLT12_Foo", "TestSSH2_Bar", "TestCFG1_X", "TestMCP4_LT5_Both", "FuzzHS3"}
	assert.True(t, citedBy("LT-12", names))
	assert.False(t, citedBy("LT-1", names), "LT1 must not match LT12")
	assert.True(t, citedBy("SSH-2", names))
	assert.False(t, citedBy("SS-2", names), "SS2 must not match inside SSH2")
	assert.False(t, citedBy("H-2", names))
	assert.True(t, citedBy("LT-5", names), "a second ID in one name counts")
	assert.True(t, citedBy("HS-3", names), "fuzz targets count")
	assert.False(t, citedBy("CFG-10", names))

	spec := "# title\n## 1. One\n- **CFG-1** text `**not**`\n- **CFG-2** and **CFG-3**\n" +
		"## 24. Logs\n| ID | Level |\n|---|---|\n| LOG-1 | Info |\n" +
		"## 26. Open\n- **Q-1 Restart log message text.** x\n"
	assert.Equal(t, map[int][]string{1: {"CFG-1", "CFG-2", "CFG-3"}, 24: {"LOG-1"}}, specIDs(spec))

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.ids"), []byte("# c\nLT-1\n\nLT-2 # why\n"), 0o644))
	got, err := readIDLists(dir)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"LT-1": "a.ids", "LT-2": "a.ids"}, got)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.ids"), []byte("LT-1\n"), 0o644))
	got, err = readIDLists(dir)
	require.NoError(t, err)
	assert.Equal(t, "a.ids, b.ids", got["LT-1"], "two lists may share an ID")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.ids"), []byte("LT-1\nLT-1\n"), 0o644))
	_, err = readIDLists(dir)
	assert.ErrorContains(t, err, "LT-1 listed twice")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.ids"), []byte("lt1\n"), 0o644))
	_, err = readIDLists(dir)
	assert.ErrorContains(t, err, "is not a requirement ID")

	ex := filepath.Join(dir, "exempt.txt")
	require.NoError(t, os.WriteFile(ex, []byte("PM-8: orchestrator\n"), 0o644))
	exempt, err := readExemptions(ex)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"PM-8": "orchestrator"}, exempt)
	require.NoError(t, os.WriteFile(ex, []byte("PM-8\n"), 0o644))
	_, err = readExemptions(ex)
	assert.ErrorContains(t, err, `want "ID: reason"`)

	// End to end on a fake module: a listed ID without a test, a spec ID
	// neither listed nor exempt, and the same module passing once the
	// spec is absent except for the untested ID.
	mod := t.TempDir()
	req := filepath.Join(mod, "requirements")
	require.NoError(t, os.Mkdir(req, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(req, "x.ids"), []byte("CFG-1\nCFG-2\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(req, "exempt.txt"), []byte("CFG-3: later\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "a_test.go"), []byte("package a\nfunc TestCFG1_X(t *T) {}\n"), 0o644))
	specFile := filepath.Join(mod, "spec.md")
	require.NoError(t, os.WriteFile(specFile, []byte("## 1. C\n- **CFG-1** a\n- **CFG-2** b\n- **CFG-3** c\n- **CFG-4** d\n## 30. Unchecked\n- **MS-1** e\n"), 0o644))
	problems, err := coverageProblems(req, mod, specFile)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"listed IDs without a test whose name cites them (LT-1 -> TestLT1_...): CFG-2 (x.ids)",
		"spec IDs of the implemented sections that no requirements/*.ids lists and exempt.txt does not exempt: §1 CFG-4",
	}, problems)
	problems, err = coverageProblems(req, mod, filepath.Join(mod, "absent.md"))
	require.NoError(t, err)
	assert.Equal(t, []string{"listed IDs without a test whose name cites them (LT-1 -> TestLT1_...): CFG-2 (x.ids)"}, problems)
}
