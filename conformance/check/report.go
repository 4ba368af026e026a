package check

import (
	"fmt"
	"io"
	"strings"

	"github.com/segmentio/encoding/json"
)

// Peer is how the graded peer names itself (for an agent, initialize's
// agentInfo).
type Peer struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// String renders "name version", or "" when the peer did not name itself.
func (p Peer) String() string { return strings.TrimSpace(p.Name + " " + p.Version) }

// Report is one grading: the JSON document acpcheck --json prints, and
// what every other rendering (the table, an HTML page) is drawn from.
// Everything a renderer needs is in it; Judge keeps the derived fields
// (Verdict, OK, Summary, Mandatory) in step with Results.
type Report struct {
	// Role is what was graded: an agent or a client.
	Role Role `json:"role"`
	// Command is the command line graded, as launched.
	Command []string `json:"command"`
	// Env lists the variables the user set for the peer, values masked
	// ("NAME=***").
	Env []string `json:"env,omitempty"`
	// Peer is the peer graded, as it named itself.
	Peer Peer `json:"peer"`
	// Verdict is OK, FAILED or INCOMPLETE; acpcheck's exit status follows
	// it (Verdict.ExitCode).
	Verdict Verdict `json:"verdict"`
	// OK is true exactly when Verdict is OK.
	OK bool `json:"ok"`
	// Registered is how many checks the registry holds; fewer results mean
	// --only chose some.
	Registered int `json:"registered"`
	// Summary counts the results by status.
	Summary Counts `json:"summary"`
	// Mandatory says how many mandatory checks were graded, and why the
	// others were not.
	Mandatory Coverage `json:"mandatory"`
	// Advertised is what the agent advertised in the grading's first
	// answers (agent gradings only).
	Advertised Advertised `json:"advertised"`
	Results    []Result   `json:"results"`
}

// Advertised is what an agent advertised: each capability gate the
// grading learned, true or false (initialize's capabilities, and
// session/new's modes and configOptions), and every auth method
// (Handshake.AllAuthMethods). A gate absent from Gates was never learned:
// no check got that far.
type Advertised struct {
	Gates       map[string]bool `json:"gates,omitempty"`
	AuthMethods []string        `json:"authMethods,omitempty"`
}

// PeerName names the peer graded: "name version", or says it did not
// name itself.
func (r Report) PeerName() string {
	if r.Peer.Name == "" {
		article := "a"
		if strings.ContainsRune("aeiou", rune(string(r.Role + "x")[0])) {
			article = "an"
		}
		return fmt.Sprintf("%s %s that does not name itself", article, r.Role)
	}
	return r.Peer.String()
}

// Judge recomputes the verdict and the summaries from Results; call it
// after changing results (a baseline applied, transcripts dropped).
func (r *Report) Judge() {
	if r.Results == nil {
		r.Results = []Result{}
	}
	r.Verdict = Judge(r.Results)
	r.OK = r.Verdict == VerdictOK
	r.Summary = Count(r.Results)
	r.Mandatory = CoverageOf(r.Results, TierMandatory)
}

// ApplyBaseline marks the results against b and judges the report again.
func (r *Report) ApplyBaseline(b Baseline) {
	b.Apply(r.Results)
	r.Judge()
}

// NotGradedGroup is the mandatory checks that were not graded for one
// reason: the status they share and the reason of the first of them
// (the others were not launched for it, or skipped alike).
type NotGradedGroup struct {
	Status Status
	Reason string
	IDs    []string
}

// NotGradedGroups groups r's ungraded mandatory checks by status, in
// order of first appearance, each with its first launched check's reason.
func (r Report) NotGradedGroups() []NotGradedGroup {
	var groups []NotGradedGroup
	index := map[Status]int{}
	byID := map[string]Result{}
	for _, res := range r.Results {
		byID[res.ID] = res
	}
	for _, ng := range r.Mandatory.NotGraded {
		i, ok := index[ng.Status]
		if !ok {
			i = len(groups)
			index[ng.Status] = i
			groups = append(groups, NotGradedGroup{Status: ng.Status})
		}
		g := &groups[i]
		g.IDs = append(g.IDs, ng.ID)
		if g.Reason == "" && !byID[ng.ID].NotLaunched {
			g.Reason = ng.Reason
		}
	}
	for i := range groups {
		if groups[i].Reason == "" { // every one of them was not launched
			groups[i].Reason = byID[groups[i].IDs[0]].Reason
		}
	}
	return groups
}

// SummaryLine is the one-line verdict: the counts, how many mandatory
// checks were graded, the verdict, and the peer graded.
func SummaryLine(r Report) string {
	c := r.Summary
	scope := fmt.Sprintf("%d checks", len(r.Results))
	if r.Registered > len(r.Results) {
		scope = fmt.Sprintf("%d of %d checks (--only)", len(r.Results), r.Registered)
	}
	fixed := fmt.Sprintf("%d fixed since the baseline", c.Fixed)
	if c.Intermittent > 0 {
		fixed += fmt.Sprintf(", %d listed as intermittent", c.Intermittent)
	}
	return fmt.Sprintf("%s: %d pass, %d fail (%d known), %d skip, %d needs a working model, %d needs a credential, %s; %d of %d mandatory graded — %s (%s)",
		scope, c.Pass, c.Fail, c.Known, c.Skip, c.NeedsModel, c.NeedsCredential, fixed,
		r.Mandatory.Graded, r.Mandatory.Total, r.Verdict, r.PeerName())
}

// Label is a result as the table's RESULT column shows it.
func Label(r Result) string {
	switch {
	case r.Known && r.Intermittent:
		return "fail (known, intermittent)"
	case r.Known:
		return "fail (known)"
	case r.Intermittent:
		return string(r.Status) + " (fails some runs)"
	case r.Fixed:
		return "pass (fixed: drop it from the baseline)"
	case r.Status == StatusNeedsModel, r.Status == StatusNeedsCredential:
		return statusPhrase(r.Status)
	}
	return string(r.Status)
}

// WriteTable prints a report: the peer graded, an aligned table (ID, tier,
// result, reason), the mandatory checks not graded with why, the summary
// line, and the wire transcript of every check that did not pass.
func WriteTable(w io.Writer, r Report) error {
	tw := &errWriter{w: w}
	tw.printf("%s: %s\n", r.Role, r.PeerName())
	if len(r.Env) > 0 {
		tw.printf("env: %s\n", strings.Join(r.Env, " "))
	}
	tw.printf("\n")
	rows := [][]string{{"ID", "TIER", "RESULT", "REASON"}}
	for _, res := range r.Results {
		rows = append(rows, []string{res.ID, string(res.Tier), Label(res), oneLine(res.Reason)})
	}
	var width [3]int
	for _, row := range rows {
		for i := range width {
			width[i] = max(width[i], len([]rune(row[i])))
		}
	}
	for _, row := range rows {
		line := fmt.Sprintf("%-*s  %-*s  %-*s  %s", width[0], row[0], width[1], row[1], width[2], row[2], row[3])
		tw.printf("%s\n", strings.TrimRight(line, " "))
	}
	var regraded []Result
	for _, res := range r.Results {
		if res.Regraded != "" {
			regraded = append(regraded, res)
		}
	}
	if len(regraded) > 0 {
		tw.printf("\ngraded again on a fresh launch, after not passing on the shared process: %d\n", len(regraded))
		for _, res := range regraded {
			tw.printf("  %s: %s\n", res.ID, oneLine(res.Regraded))
		}
	}
	if groups := r.NotGradedGroups(); len(groups) > 0 {
		tw.printf("\nnot graded: %d of %d mandatory checks\n", r.Mandatory.Total-r.Mandatory.Graded, r.Mandatory.Total)
		for _, g := range groups {
			tw.printf("  %s (%d): %s — %s\n", statusPhrase(g.Status), len(g.IDs), strings.Join(g.IDs, ", "), oneLine(g.Reason))
		}
	}
	tw.printf("\n%s\n", SummaryLine(r))
	for _, res := range r.Results {
		if len(res.Transcript) == 0 || res.Status == StatusPass || res.Status == StatusSkip {
			continue
		}
		tw.printf("\n--- %s (%s): %s\n", res.ID, res.Status, oneLine(res.Reason))
		if tw.err == nil {
			tw.err = WriteTranscript(w, res.Transcript)
		}
	}
	return tw.err
}

// errWriter keeps the first write error, so a renderer checks once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// WriteJSON prints the report as one indented JSON document.
func WriteJSON(w io.Writer, r Report) error {
	r.Judge()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
