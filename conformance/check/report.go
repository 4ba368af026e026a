package check

import (
	"fmt"
	"io"
	"strings"

	"github.com/segmentio/encoding/json"
)

// WriteTable prints results as an aligned table (ID, tier, result, reason),
// a summary line, and the wire transcript of every check that did not pass.
func WriteTable(w io.Writer, rs []Result) error {
	rows := [][]string{{"ID", "TIER", "RESULT", "REASON"}}
	for _, r := range rs {
		rows = append(rows, []string{r.ID, string(r.Tier), label(r), oneLine(r.Reason)})
	}
	var width [3]int
	for _, row := range rows {
		for i := range width {
			width[i] = max(width[i], len([]rune(row[i])))
		}
	}
	for _, row := range rows {
		line := fmt.Sprintf("%-*s  %-*s  %-*s  %s", width[0], row[0], width[1], row[1], width[2], row[2], row[3])
		if _, err := fmt.Fprintln(w, strings.TrimRight(line, " ")); err != nil {
			return err
		}
	}
	c := Count(rs)
	verdict := "OK"
	if Failed(rs) {
		verdict = "FAILED"
	}
	if _, err := fmt.Fprintf(w, "\n%d checks: %d pass, %d fail (%d known), %d skip, %d needs a working model, %d fixed since the baseline — %s\n",
		len(rs), c.Pass, c.Fail, c.Known, c.Skip, c.NeedsModel, c.Fixed, verdict); err != nil {
		return err
	}
	for _, r := range rs {
		if len(r.Transcript) == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "\n--- %s (%s): %s\n", r.ID, r.Status, oneLine(r.Reason)); err != nil {
			return err
		}
		if err := WriteTranscript(w, r.Transcript); err != nil {
			return err
		}
	}
	return nil
}

func label(r Result) string {
	switch {
	case r.Known:
		return "fail (known)"
	case r.Fixed:
		return "pass (fixed: drop it from the baseline)"
	case r.Status == StatusNeedsModel:
		return "needs a working model"
	}
	return string(r.Status)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Report is the JSON document acpcheck --json prints.
type Report struct {
	Command []string `json:"command"`
	// OK is false exactly when acpcheck exits non-zero for the results.
	OK      bool     `json:"ok"`
	Summary Counts   `json:"summary"`
	Results []Result `json:"results"`
}

// WriteJSON prints results as one indented JSON Report.
func WriteJSON(w io.Writer, argv []string, rs []Result) error {
	if rs == nil {
		rs = []Result{}
	}
	b, err := json.MarshalIndent(Report{Command: argv, OK: !Failed(rs), Summary: Count(rs), Results: rs}, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
