// Package reqindex checks a module's requirement index: the file
// (REQUIREMENTS.md) that says in one line what each spec ID the module's
// tests cite demands, so that a reader can look up every test name. The
// adapter's index (adapter/REQUIREMENTS.md, one spec) and the root
// module's (REQUIREMENTS.md: protocol.md, transport.md and adapter.md)
// are checked by it, each from a test beside the file.
//
// An index is free text up to its first section heading; after it, every
// non-blank line is one of:
//
//	## §<n> <name>                    section n of the index's only spec
//	## <spec> §<n> <name>             section n of spec (a numbered spec: "## 7. …")
//	## <spec> <title>                 the section of spec headed title (an unnumbered spec)
//	- **<ID>** <what it demands>      a requirement the module implements and tests
//	- **<ID>** <what it demands> *Exempt:* <why not here>
//
// Check reports: a listed ID (not exempt) no test, fuzz target or
// benchmark name cites (LT-1 is cited by TestLT1_…, not TestLT12_…); an ID
// a test name cites that is not listed; and, for each spec whose file is
// present, an ID of its complete sections neither listed nor exempt, a
// listed ID it does not define, and one listed under another section than
// the one defining it. Without the spec files (a clone without ../shared)
// it checks the index against the tests only.
package reqindex

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// Spec is a specification an index lists IDs of.
type Spec struct {
	// Name is how the index's headings name it ("protocol.md"), or "" for
	// an index with only this spec, whose headings name sections alone.
	Name string
	// Path is the spec's file; when it does not exist, the index is not
	// checked against it.
	Path string
	// Complete are the keys of the sections whose every ID the index must
	// list or exempt: "§7" for a numbered section, the title for another
	// ("Streamable HTTP").
	Complete []string
}

// Check checks the index at index against the names of the tests of the
// module rooted at root and against specs. A malformed index, or a file
// that cannot be read, is an error; what they disagree on are problems.
func Check(index, root string, specs []Spec) ([]string, error) {
	data, err := os.ReadFile(index)
	if err != nil {
		return nil, err
	}
	entries, err := Parse(index, string(data), specs)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%s lists no requirement", index)
	}
	names, err := TestNames(root)
	if err != nil {
		return nil, err
	}
	defined := map[string]map[string][]string{} // spec name → section → IDs
	for _, s := range specs {
		text, err := os.ReadFile(s.Path)
		switch {
		case err == nil:
			defined[s.Name] = SpecIDs(string(text))
		case !errors.Is(err, fs.ErrNotExist): // absent: a clone without ../shared
			return nil, err
		}
	}
	c := &checker{file: index, entries: entries, names: names}
	c.againstTests(defined)
	for _, s := range specs {
		if ids, ok := defined[s.Name]; ok {
			c.againstSpec(s, ids)
		}
	}
	return c.problems, nil
}

// checker collects the problems of one index.
type checker struct {
	file     string
	entries  map[string]Entry
	names    []string
	problems []string
}

func (c *checker) report(what string, items []string) {
	if len(items) > 0 {
		c.problems = append(c.problems, what+": "+strings.Join(items, ", "))
	}
}

// againstTests: every listed ID has a test that cites it, and every ID a
// test cites is listed. The IDs a test name cites are recognised by the
// prefixes of the index and of the specs (so TestE2E_… cites no E-2).
func (c *checker) againstTests(defined map[string]map[string][]string) {
	var untested []string
	for _, id := range sortedKeys(c.entries) {
		if e := c.entries[id]; e.Exempt == "" && !CitedBy(id, c.names) {
			untested = append(untested, fmt.Sprintf("%s (%s)", id, e.where()))
		}
	}
	c.report("listed IDs without a test whose name cites them (LT-1 -> TestLT1_...)", untested)
	prefixes := map[string]bool{}
	for id := range c.entries {
		prefixes[prefix(id)] = true
	}
	for _, sections := range defined {
		for _, ids := range sections {
			for _, id := range ids {
				prefixes[prefix(id)] = true
			}
		}
	}
	var unexplained []string
	for id, name := range CitedIDs(c.names, prefixes) {
		if _, ok := c.entries[id]; !ok {
			unexplained = append(unexplained, id+" ("+name+")")
		}
	}
	slices.Sort(unexplained)
	c.report("IDs cited by a test name that "+c.file+" does not list", unexplained)
}

// againstSpec: the complete sections of s are listed, and every ID listed
// under s is defined by it, in the section it is listed under.
func (c *checker) againstSpec(s Spec, sections map[string][]string) {
	var unlisted, unknown, misplaced []string
	for _, sec := range s.Complete {
		for _, id := range sections[sec] {
			if _, ok := c.entries[id]; !ok {
				unlisted = append(unlisted, strings.TrimSpace(s.Name+" "+sec+" "+id))
			}
		}
	}
	definedIn := map[string]string{}
	for sec, ids := range sections {
		for _, id := range ids {
			definedIn[id] = sec
		}
	}
	for _, id := range sortedKeys(c.entries) {
		e := c.entries[id]
		if e.Spec != s.Name {
			continue
		}
		sec, ok := definedIn[id]
		switch {
		case !ok:
			unknown = append(unknown, id)
		case sec != e.Section:
			misplaced = append(misplaced, fmt.Sprintf("%s (under %s, defined in %s)", id, e.where(), strings.TrimSpace(s.Name+" "+sec)))
		}
	}
	c.report("spec IDs of the complete sections that "+c.file+" neither lists nor exempts", unlisted)
	c.report("listed IDs the spec does not define", unknown)
	c.report("IDs listed under another section than the one defining them", misplaced)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
