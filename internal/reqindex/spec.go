package reqindex

import (
	"regexp"
	"strings"
)

var (
	specNumbered = regexp.MustCompile(`^## ([0-9]+)\.`)
	specTitled   = regexp.MustCompile(`^## (\S.*)$`)
	// A requirement is defined in bold at a bullet (**LT-1**) or as the
	// first cell of a table row (| LOG-1 |).
	boldID  = regexp.MustCompile(`\*\*([A-Z]+-[0-9]+)\*\*`)
	tableID = regexp.MustCompile(`^\|\s*([A-Z]+-[0-9]+)\s*\|`)
)

// SpecIDs maps each section of a spec to the IDs defined in it, in order.
// A section is "## 7. Name" (key "§7") or, in a spec without numbers,
// "## Title (remark)" (key "Title").
func SpecIDs(spec string) map[string][]string {
	out := map[string][]string{}
	sec := ""
	for line := range strings.Lines(spec) {
		if m := specNumbered.FindStringSubmatch(line); m != nil {
			sec = "§" + m[1]
			continue
		}
		if m := specTitled.FindStringSubmatch(strings.TrimRight(line, "\r\n")); m != nil {
			title, _, _ := strings.Cut(m[1], " (")
			sec = strings.TrimSpace(title)
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
