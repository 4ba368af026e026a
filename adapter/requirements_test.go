package adapter

import (
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

// The requirement coverage check. REQUIREMENTS.md lists, one line each,
// the spec IDs this module implements and the ones of its sections it
// exempts, with a reason; its top documents the line format. Each listed ID
// needs a test (or fuzz target) whose name cites it without its dash
// (TestLT1_…, TestHS3_…), and each ID a test name cites needs a line, so a
// reader can look it up. When the spec is present beside the repository
// (../shared, as in CI), every ID of the sections this module implements
// must be listed or exempted, under the section that defines it. A clone
// without ../shared checks the file and the tests only.

// reqFile is the module's requirement list, relative to this package.
const reqFile = "REQUIREMENTS.md"

// specPath is <repo>/../shared/spec/adapter.md, relative to this package.
const specPath = "../../shared/spec/adapter.md"

// checkedSections are the spec sections the module implements: all of them
// (§7–§9 with the measurement sources, §21 with the SSH launcher).
var checkedSections = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}

func TestRequirementsCovered(t *testing.T) {
	problems, err := coverageProblems(reqFile, ".", specPath)
	require.NoError(t, err)
	for _, p := range problems {
		t.Error(p)
	}
}

// coverageProblems runs the check: the requirement list at reqPath, the
// tests of the module at root, and the spec at spec when that file exists.
// A malformed list is an error; what the list and the tests or the spec
// disagree on are problems.
func coverageProblems(reqPath, root, spec string) ([]string, error) {
	reqs, err := readRequirements(reqPath)
	if err != nil {
		return nil, err
	}
	if len(reqs) == 0 {
		return nil, fmt.Errorf("%s lists no requirement", reqPath)
	}
	names, err := testNames(root)
	if err != nil {
		return nil, err
	}
	var bySection map[int][]string
	data, err := os.ReadFile(spec)
	switch {
	case err == nil:
		bySection = specIDs(string(data))
	case !errors.Is(err, fs.ErrNotExist): // absent: a clone without ../shared
		return nil, err
	}

	var problems []string
	report := func(what string, items []string) {
		if len(items) > 0 {
			problems = append(problems, what+": "+strings.Join(items, ", "))
		}
	}

	// Lists that the per-topic contract of one session created; their
	// lines belong in REQUIREMENTS.md.
	var stray []string
	for _, pattern := range []string{"*.ids", "exempt.txt"} {
		files, err := filepath.Glob(filepath.Join(root, "requirements", pattern))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			stray = append(stray, filepath.ToSlash(filepath.Join("requirements", filepath.Base(f))))
		}
	}
	report("requirement lists outside "+reqFile+" (fold their lines into it and delete them)", stray)

	var untested []string
	for _, id := range sortedKeys(reqs) {
		if r := reqs[id]; r.exempt == "" && !citedBy(id, names) {
			untested = append(untested, fmt.Sprintf("%s (§%d)", id, r.section))
		}
	}
	report("listed IDs without a test whose name cites them (LT-1 -> TestLT1_...)", untested)

	// The IDs test names cite, recognised by the prefixes the list and the
	// spec use (so TestE2E_… cites no E-2).
	prefixes := map[string]bool{}
	for id := range reqs {
		prefixes[idPrefix(id)] = true
	}
	for _, ids := range bySection {
		for _, id := range ids {
			prefixes[idPrefix(id)] = true
		}
	}
	var unexplained []string
	for id, name := range citedIDs(names, prefixes) {
		if _, ok := reqs[id]; !ok {
			unexplained = append(unexplained, id+" ("+name+")")
		}
	}
	slices.Sort(unexplained)
	report("IDs cited by a test name that "+reqFile+" does not list", unexplained)

	if bySection == nil {
		return problems, nil
	}
	defined := map[string]int{}
	for sec, ids := range bySection {
		for _, id := range ids {
			defined[id] = sec
		}
	}
	var unlisted, unknown, misplaced []string
	for _, sec := range checkedSections {
		for _, id := range bySection[sec] {
			if _, ok := reqs[id]; !ok {
				unlisted = append(unlisted, fmt.Sprintf("§%d %s", sec, id))
			}
		}
	}
	for _, id := range sortedKeys(reqs) {
		sec, ok := defined[id]
		switch {
		case !ok:
			unknown = append(unknown, id)
		case sec != reqs[id].section:
			misplaced = append(misplaced, fmt.Sprintf("%s (under §%d, defined in §%d)", id, reqs[id].section, sec))
		}
	}
	report("spec IDs of the implemented sections that "+reqFile+" neither lists nor exempts", unlisted)
	report("listed IDs the spec does not define", unknown)
	report("IDs listed under another section than the one defining them", misplaced)
	return problems, nil
}

// requirement is one line of REQUIREMENTS.md.
type requirement struct {
	section int
	line    int
	what    string // what the requirement demands
	exempt  string // why the module does not implement it; "" when it does
}

var (
	// reqSection and reqEntry are REQUIREMENTS.md's two line shapes (its
	// "Line format"); an entry's text may end in exemptMark and a reason.
	reqSection = regexp.MustCompile(`^## §([1-9][0-9]*) \S`)
	reqEntry   = regexp.MustCompile(`^- \*\*([A-Z]+-[0-9]+)\*\* (\S.*)$`)
)

const exemptMark = "*Exempt:*"

// readRequirements parses the requirement list at path.
func readRequirements(path string) (map[string]requirement, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseRequirements(path, string(data))
}

// parseRequirements maps each ID of a requirement list to its line. Text
// before the first section heading is free; after it, a line of another
// shape, or an ID listed twice, is an error naming name and the line.
func parseRequirements(name, text string) (map[string]requirement, error) {
	out := map[string]requirement{}
	section := 0
	for n, line := range slices.Collect(strings.Lines(text)) {
		n++
		line = strings.TrimRight(line, " \t\r\n")
		if section == 0 && !strings.HasPrefix(line, "## §") {
			continue // the preamble
		}
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			m := reqSection.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("%s:%d: want a section heading \"## §<n> <name>\", got %q", name, n, line)
			}
			section, _ = strconv.Atoi(m[1])
			continue
		}
		m := reqEntry.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("%s:%d: want \"- **<ID>** <what it demands>\", got %q", name, n, line)
		}
		id, r := m[1], requirement{section: section, line: n, what: m[2]}
		if what, why, ok := strings.Cut(m[2], " "+exemptMark); ok {
			r.what, r.exempt = what, strings.TrimSpace(why)
		}
		if r.exempt == "" && strings.Contains(m[2], exemptMark) {
			return nil, fmt.Errorf("%s:%d: %s: want \"<what it demands> %s <reason>\", got %q", name, n, id, exemptMark, m[2])
		}
		if prev, dup := out[id]; dup {
			return nil, fmt.Errorf("%s:%d: %s listed twice (first at line %d)", name, n, id, prev.line)
		}
		out[id] = r
	}
	return out, nil
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

// citedToken is an ID as a test name cites it: capitals, then digits.
var citedToken = regexp.MustCompile(`[A-Z]+[0-9]+`)

// citedIDs maps each ID that names cite, by the rule of citedBy and with a
// prefix in prefixes, to the first name citing it.
func citedIDs(names []string, prefixes map[string]bool) map[string]string {
	out := map[string]string{}
	for _, name := range names {
		for _, tok := range citedToken.FindAllString(name, -1) {
			digits := strings.IndexAny(tok, "0123456789")
			id := tok[:digits] + "-" + tok[digits:]
			if _, seen := out[id]; !seen && prefixes[tok[:digits]] {
				out[id] = name
			}
		}
	}
	return out
}

// idPrefix is an ID's letters: CFG for CFG-1.
func idPrefix(id string) string {
	p, _, _ := strings.Cut(id, "-")
	return p
}

func sortedKeys[V any](m map[string]V) []string {
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

	assert.Equal(t, map[string]string{"LT-12": "TestLT12_Foo", "SSH-2": "TestSSH2_Bar", "MCP-4": "TestMCP4_LT5_Both", "LT-5": "TestMCP4_LT5_Both"},
		citedIDs(append(names, "TestE2E_UTF8"), map[string]bool{"SSH": true, "MCP": true, "LT": true, "SS": true}),
		"cited IDs follow citedBy's rule and only known prefixes count")

	list := "# Title\n- **XX-1** in the preamble, free\n    ## §9 also free\n" +
		"## §1 Configuration\n- **CFG-1** registers\n\n" +
		"- **CFG-2** validates *Exempt:* orchestrator-side\n## §24 Log records\n- **LOG-1** logs `x`\n"
	got, err := parseRequirements("R.md", list)
	require.NoError(t, err)
	assert.Equal(t, map[string]requirement{
		"CFG-1": {section: 1, line: 5, what: "registers"},
		"CFG-2": {section: 1, line: 7, what: "validates", exempt: "orchestrator-side"},
		"LOG-1": {section: 24, line: 9, what: "logs `x`"},
	}, got)
	for bad, want := range map[string]string{
		"## §1 A\n- **CFG-1** a\n- **CFG-1** b\n": "R.md:3: CFG-1 listed twice (first at line 2)",
		"## §1 A\n- CFG-1 a\n":                    `R.md:2: want "- **<ID>** <what it demands>"`,
		"## §1 A\n- **cfg-1** a\n":                `R.md:2: want "- **<ID>**`,
		"## §1 A\n- **CFG-1**\n":                  `R.md:2: want "- **<ID>**`,
		"## §1 A\nsome prose\n":                   `R.md:2: want "- **<ID>**`,
		"## §1 A\n## Notes\n":                     `R.md:2: want a section heading`,
		"## §1\n":                                 `R.md:1: want a section heading`,
		"## §1 A\n- **CFG-1** a *Exempt:*\n":      `R.md:2: CFG-1: want "<what it demands> *Exempt:* <reason>"`,
		"## §1 A\n- **CFG-1** *Exempt:* why\n":    `R.md:2: CFG-1: want "<what it demands> *Exempt:* <reason>"`,
	} {
		_, err := parseRequirements("R.md", bad)
		assert.ErrorContains(t, err, want, "%q", bad)
	}

	// End to end on a fake module: a listed ID without a test, a cited ID
	// not listed, a spec ID neither listed nor exempt, an ID under the
	// wrong section, an ID the spec lacks, a stray list; then the same
	// module without the spec, which checks only the list and the tests.
	mod := t.TempDir()
	reqs := filepath.Join(mod, "REQUIREMENTS.md")
	require.NoError(t, os.WriteFile(reqs, []byte("intro\n## §1 C\n- **CFG-1** a\n- **CFG-2** b\n"+
		"- **CFG-3** c *Exempt:* later\n- **MS-1** e\n- **CFG-9** f *Exempt:* gone\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "a_test.go"),
		[]byte("package a\nfunc TestCFG1_X(t *T) {}\nfunc TestCFG5_MS1_Y(t *T) {}\nfunc TestE2E(t *T) {}\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(mod, "requirements"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "requirements", "ssh.ids"), []byte("SSH-1  # argv\n"), 0o644))
	specFile := filepath.Join(mod, "spec.md")
	require.NoError(t, os.WriteFile(specFile, []byte("## 1. C\n- **CFG-1** a\n- **CFG-2** b\n- **CFG-3** c\n- **CFG-4** d\n## 30. Unchecked\n- **MS-1** e\n"), 0o644))
	stray := "requirement lists outside REQUIREMENTS.md (fold their lines into it and delete them): requirements/ssh.ids"
	untested := "listed IDs without a test whose name cites them (LT-1 -> TestLT1_...): CFG-2 (§1)"
	unexplained := "IDs cited by a test name that REQUIREMENTS.md does not list: CFG-5 (TestCFG5_MS1_Y)"
	problems, err := coverageProblems(reqs, mod, specFile)
	require.NoError(t, err)
	assert.Equal(t, []string{
		stray, untested, unexplained,
		"spec IDs of the implemented sections that REQUIREMENTS.md neither lists nor exempts: §1 CFG-4",
		"listed IDs the spec does not define: CFG-9",
		"IDs listed under another section than the one defining them: MS-1 (under §1, defined in §30)",
	}, problems)
	problems, err = coverageProblems(reqs, mod, filepath.Join(mod, "absent.md"))
	require.NoError(t, err)
	assert.Equal(t, []string{stray, untested, unexplained}, problems)

	require.NoError(t, os.WriteFile(reqs, []byte("## §1 C\n- **CFG-1** a\n- **CFG-1** a\n"), 0o644))
	_, err = coverageProblems(reqs, mod, specFile)
	assert.ErrorContains(t, err, "CFG-1 listed twice", "a malformed list fails the check")
}
