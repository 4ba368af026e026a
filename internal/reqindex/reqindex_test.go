package reqindex

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckCatchesGaps holds the check's parts to their job, so a broken
// check cannot pass silently.
func TestCheckCatchesGaps(t *testing.T) {
	names := []string{"TestLT12_Foo", "TestSSH2_Bar", "TestCFG1_X", "TestMCP4_LT5_Both", "FuzzHS3"}
	assert.True(t, CitedBy("LT-12", names))
	assert.False(t, CitedBy("LT-1", names), "LT1 must not match LT12")
	assert.True(t, CitedBy("SSH-2", names))
	assert.False(t, CitedBy("SS-2", names), "SS2 must not match inside SSH2")
	assert.False(t, CitedBy("H-2", names))
	assert.True(t, CitedBy("LT-5", names), "a second ID in one name counts")
	assert.True(t, CitedBy("HS-3", names), "fuzz targets count")
	assert.False(t, CitedBy("CFG-10", names))

	assert.Equal(t, map[string]string{"LT-12": "TestLT12_Foo", "SSH-2": "TestSSH2_Bar", "MCP-4": "TestMCP4_LT5_Both", "LT-5": "TestMCP4_LT5_Both"},
		CitedIDs(append(names, "TestE2E_UTF8"), map[string]bool{"SSH": true, "MCP": true, "LT": true, "SS": true}),
		"cited IDs follow CitedBy's rule and only known prefixes count")
}

// TestSpecSections: a spec's sections are numbered ("## 7. …", key §7) or
// titled ("## Raw TCP (remark)", key "Raw TCP").
func TestSpecSections(t *testing.T) {
	numbered := "# title\n## 1. One\n- **CFG-1** text `**not**`\n- **CFG-2** and **CFG-3**\n" +
		"### 1.1 a subsection\n- **CFG-4** still §1\n" +
		"## 24. Logs\n| ID | Level |\n|---|---|\n| LOG-1 | Info |\n" +
		"## 26. Open\n- **Q-1 Restart log message text.** x\n"
	assert.Equal(t, map[string][]string{"§1": {"CFG-1", "CFG-2", "CFG-3", "CFG-4"}, "§24": {"LOG-1"}}, SpecIDs(numbered))
	titled := "# Transport\nintro\n## Streamable HTTP (one endpoint, `/acp`)\n- **TR-1** a\n- **TR-2** b\n" +
		"## Raw TCP\n- **TR-16** c\n"
	assert.Equal(t, map[string][]string{"Streamable HTTP": {"TR-1", "TR-2"}, "Raw TCP": {"TR-16"}}, SpecIDs(titled))
}

// TestParse: the index's line shapes, for one spec and for several.
func TestParse(t *testing.T) {
	one := []Spec{{}}
	list := "# Title\n- **XX-1** in the preamble, free\n    ## §9 also free\n" +
		"## §1 Configuration\n- **CFG-1** registers\n\n" +
		"- **CFG-2** validates *Exempt:* orchestrator-side\n## §24 Log records\n- **LOG-1** logs `x`\n"
	got, err := Parse("R.md", list, one)
	require.NoError(t, err)
	assert.Equal(t, map[string]Entry{
		"CFG-1": {Section: "§1", Line: 5, What: "registers"},
		"CFG-2": {Section: "§1", Line: 7, What: "validates", Exempt: "orchestrator-side"},
		"LOG-1": {Section: "§24", Line: 9, What: "logs `x`"},
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
		_, err := Parse("R.md", bad, one)
		assert.ErrorContains(t, err, want, "%q", bad)
	}

	several := []Spec{{Name: "protocol.md"}, {Name: "transport.md"}}
	got, err = Parse("R.md", "intro\n## protocol.md §7 What the SDK must do\n- **SDK-1** generated\n"+
		"## transport.md Streamable HTTP\n- **TR-1** one message per POST\n## transport.md Raw TCP\n", several)
	require.NoError(t, err)
	assert.Equal(t, map[string]Entry{
		"SDK-1": {Spec: "protocol.md", Section: "§7", Line: 3, What: "generated"},
		"TR-1":  {Spec: "transport.md", Section: "Streamable HTTP", Line: 5, What: "one message per POST"},
	}, got)
	_, err = Parse("R.md", "## §7 What\n", several)
	assert.ErrorContains(t, err, `R.md:1: "## §7 What" names no spec, and this index has several`)
	_, err = Parse("R.md", "## protocol.md §7 What\n## adapter.md §5 Start\n", several)
	assert.ErrorContains(t, err, `R.md:2: "## adapter.md §5 Start": adapter.md is not a spec of this index`)
}

// TestCheck end to end on a fake module: a listed ID without a test, a
// cited ID not listed, a spec ID neither listed nor exempt, an ID under the
// wrong section, an ID the spec lacks; a nested module's and
// node_modules' tests do not count; then the same module without the
// spec, which checks only the list and the tests; then an index of two
// specs, one numbered and one titled.
func TestCheck(t *testing.T) {
	mod := t.TempDir()
	index := filepath.Join(mod, "REQUIREMENTS.md")
	write := func(name, text string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(mod, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644))
	}
	write("REQUIREMENTS.md", "intro\n## §1 C\n- **CFG-1** a\n- **CFG-2** b\n"+
		"- **CFG-3** c *Exempt:* later\n- **MS-1** e\n- **CFG-9** f *Exempt:* gone\n")
	write("a_test.go", "package a\nfunc TestCFG1_X(t *T) {}\nfunc TestCFG5_MS1_Y(t *T) {}\nfunc TestE2E(t *T) {}\n")
	write("nested/go.mod", "module nested\n")
	write("nested/b_test.go", "package b\nfunc TestCFG2_Elsewhere(t *T) {}\nfunc TestCFG7_Elsewhere(t *T) {}\n")
	write("x/node_modules/c_test.go", "package c\nfunc TestCFG2_Vendored(t *T) {}\n")
	write("spec.md", "## 1. C\n- **CFG-1** a\n- **CFG-2** b\n- **CFG-3** c\n- **CFG-4** d\n## 30. Unchecked\n- **MS-1** e\n")
	untested := "listed IDs without a test whose name cites them (LT-1 -> TestLT1_...): CFG-2 (§1)"
	unexplained := "IDs cited by a test name that " + index + " does not list: CFG-5 (TestCFG5_MS1_Y)"
	problems, err := Check(index, mod, []Spec{{Path: filepath.Join(mod, "spec.md"), Complete: []string{"§1"}}})
	require.NoError(t, err)
	assert.Equal(t, []string{
		untested, unexplained,
		"spec IDs of the complete sections that " + index + " neither lists nor exempts: §1 CFG-4",
		"listed IDs the spec does not define: CFG-9",
		"IDs listed under another section than the one defining them: MS-1 (under §1, defined in §30)",
	}, problems)
	problems, err = Check(index, mod, []Spec{{Path: filepath.Join(mod, "absent.md"), Complete: []string{"§1"}}})
	require.NoError(t, err)
	assert.Equal(t, []string{untested, unexplained}, problems)

	write("p.md", "## 7. SDK\n- **SDK-1** a\n- **SDK-2** b\n")
	write("t.md", "# T\n## Streamable HTTP (x)\n- **TR-1** a\n## Raw TCP\n- **TR-16** b\n")
	write("REQUIREMENTS.md", "## p.md §7 SDK\n- **SDK-1** a\n## t.md Streamable HTTP\n- **TR-16** b\n## t.md Raw TCP\n")
	write("a_test.go", "package a\nfunc TestSDK1_X(t *T) {}\nfunc TestTR16_Y(t *T) {}\nfunc TestTR1_Z(t *T) {}\n")
	problems, err = Check(index, mod, []Spec{
		{Name: "p.md", Path: filepath.Join(mod, "p.md"), Complete: []string{"§7"}},
		{Name: "t.md", Path: filepath.Join(mod, "t.md")},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"IDs cited by a test name that " + index + " does not list: TR-1 (TestTR1_Z)",
		"spec IDs of the complete sections that " + index + " neither lists nor exempts: p.md §7 SDK-2",
		"IDs listed under another section than the one defining them: TR-16 (under t.md Streamable HTTP, defined in t.md Raw TCP)",
	}, problems)

	write("REQUIREMENTS.md", "## §1 C\n- **CFG-1** a\n- **CFG-1** a\n")
	_, err = Check(index, mod, []Spec{{Path: filepath.Join(mod, "spec.md")}})
	assert.ErrorContains(t, err, "CFG-1 listed twice", "a malformed list fails the check")
}
