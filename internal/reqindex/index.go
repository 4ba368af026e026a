package reqindex

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Entry is one requirement line of an index.
type Entry struct {
	Spec    string // the spec's Name ("" in a one-spec index)
	Section string // "§7", or an unnumbered section's title
	Line    int
	What    string // what the requirement demands
	Exempt  string // why the module does not implement it; "" when it does
}

// where names the entry's section in messages: "§7", "protocol.md §7".
func (e Entry) where() string { return strings.TrimSpace(e.Spec + " " + e.Section) }

var (
	// A section heading names a spec's section by number, or by title in
	// a spec without numbers.
	numbered = regexp.MustCompile(`^## (?:(\S+\.md) )?§([1-9][0-9]*) \S`)
	titled   = regexp.MustCompile(`^## (\S+\.md) ([^§\s].*)$`)
	// sectionLike ends the preamble: the start of a section heading.
	sectionLike = regexp.MustCompile(`^## (§|\S+\.md )`)
	// An entry: the ID in bold, then what it demands.
	entry = regexp.MustCompile(`^- \*\*([A-Z]+-[0-9]+)\*\* (\S.*)$`)
)

// exemptMark starts the reason a listed requirement is not implemented.
const exemptMark = "*Exempt:*"

// headingForms is what a section heading may look like, for errors.
const headingForms = `"## §<n> <name>", "## <spec> §<n> <name>" or "## <spec> <title>"`

// Parse maps each ID of the index text (its file name, for errors) to its
// entry. Text before the first section heading is free; after it, a line of
// another shape, a heading naming no spec of specs, or an ID listed twice
// is an error naming the line.
func Parse(name, text string, specs []Spec) (map[string]Entry, error) {
	out := map[string]Entry{}
	var spec, section string
	for n, line := range slices.Collect(strings.Lines(text)) {
		n++
		line = strings.TrimRight(line, " \t\r\n")
		if section == "" && !sectionLike.MatchString(line) {
			continue // the preamble
		}
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			var err error
			if spec, section, err = heading(line, specs); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			continue
		}
		e, id, err := parseEntry(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if prev, dup := out[id]; dup {
			return nil, fmt.Errorf("%s:%d: %s listed twice (first at line %d)", name, n, id, prev.Line)
		}
		e.Spec, e.Section, e.Line = spec, section, n
		out[id] = e
	}
	return out, nil
}

// heading parses a section heading into its spec's Name and section key.
func heading(line string, specs []Spec) (spec, section string, err error) {
	if m := numbered.FindStringSubmatch(line); m != nil {
		spec, section = m[1], "§"+m[2]
	} else if m := titled.FindStringSubmatch(line); m != nil {
		spec, section = m[1], m[2]
	} else {
		return "", "", fmt.Errorf("want a section heading (%s), got %q", headingForms, line)
	}
	for _, s := range specs {
		if s.Name == spec {
			return spec, section, nil
		}
	}
	if spec == "" {
		return "", "", fmt.Errorf("%q names no spec, and this index has several", line)
	}
	return "", "", fmt.Errorf("%q: %s is not a spec of this index", line, spec)
}

// parseEntry parses a requirement line.
func parseEntry(line string) (Entry, string, error) {
	m := entry.FindStringSubmatch(line)
	if m == nil {
		return Entry{}, "", fmt.Errorf("want \"- **<ID>** <what it demands>\", got %q", line)
	}
	e := Entry{What: m[2]}
	if what, why, ok := strings.Cut(m[2], " "+exemptMark); ok {
		e.What, e.Exempt = what, strings.TrimSpace(why)
	}
	if e.Exempt == "" && strings.Contains(m[2], exemptMark) {
		return Entry{}, "", fmt.Errorf("%s: want \"<what it demands> %s <reason>\", got %q", m[1], exemptMark, m[2])
	}
	return e, m[1], nil
}
