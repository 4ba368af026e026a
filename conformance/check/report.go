package check

import (
	"fmt"
	"io"
	"strings"

	"github.com/segmentio/encoding/json"
)

// WriteTable prints a report: the agent graded, an aligned table (ID,
// tier, result, reason), a summary line naming the agent, and the wire
// transcript of every check that did not pass.
func WriteTable(w io.Writer, rep Report) error {
	rs := rep.Results
	if _, err := fmt.Fprintf(w, "agent: %s\n\n", rep.Agent); err != nil {
		return err
	}
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
	if _, err := fmt.Fprintf(w, "\n%s\n", SummaryLine(rep.Agent, rs)); err != nil {
		return err
	}
	for _, r := range rs {
		if len(r.Transcript) == 0 || r.Status == StatusPass || r.Status == StatusSkip {
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

// SummaryLine is the one-line verdict: the counts, OK or FAILED, and the
// agent graded.
func SummaryLine(agent Agent, rs []Result) string {
	c := Count(rs)
	verdict := "OK"
	if Failed(rs) {
		verdict = "FAILED"
	}
	return fmt.Sprintf("%d checks: %d pass, %d fail (%d known), %d skip, %d needs a working model, %d needs a credential, %d fixed since the baseline — %s (%s)",
		len(rs), c.Pass, c.Fail, c.Known, c.Skip, c.NeedsModel, c.NeedsCredential, c.Fixed, verdict, agent)
}

func label(r Result) string {
	switch {
	case r.Known:
		return "fail (known)"
	case r.Fixed:
		return "pass (fixed: drop it from the baseline)"
	case r.Status == StatusNeedsModel:
		return "needs a working model"
	case r.Status == StatusNeedsCredential:
		return "needs a credential"
	}
	return string(r.Status)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Report is one grading: the JSON document acpcheck --json prints.
type Report struct {
	Command []string `json:"command"`
	// Agent is the agent graded, as its initialize answer named it.
	Agent Agent `json:"agent"`
	// OK is false exactly when acpcheck exits non-zero for the results.
	OK      bool     `json:"ok"`
	Summary Counts   `json:"summary"`
	Results []Result `json:"results"`
}

// NewReport builds the report of results for the agent started by argv.
func NewReport(argv []string, agent Agent, rs []Result) Report {
	r := Report{Command: argv, Agent: agent, Results: rs}
	r.finish()
	return r
}

// finish computes OK and Summary from Results.
func (r *Report) finish() {
	if r.Results == nil {
		r.Results = []Result{}
	}
	r.OK, r.Summary = !Failed(r.Results), Count(r.Results)
}

// WriteJSON prints the report as one indented JSON document.
func WriteJSON(w io.Writer, rep Report) error {
	rep.finish()
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
