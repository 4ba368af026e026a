package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"acpkit.dev/conformance/check"
)

// What agent and client grading share: listing a registry, --only,
// --baseline, and how a finished grading is written out.

// listChecks prints a registry's checks: ID, tier, title, gate and pins.
func listChecks[S any](w io.Writer, reg *check.Registry[S]) {
	for _, c := range reg.Checks() {
		fmt.Fprintf(w, "%-36s %-10s %s\n", c.ID, c.Tier, c.Title)
		if c.Gate != "" {
			fmt.Fprintf(w, "%48sruns when the %s offers %s\n", "", reg.Role(), c.Gate)
		}
		fmt.Fprintf(w, "%48spins: %s\n", "", c.Pins)
	}
}

// parseOnly reads --only's comma-separated IDs, refusing unknown ones.
func parseOnly[S any](reg *check.Registry[S], only string) ([]string, error) {
	if only == "" {
		return nil, nil
	}
	var ids []string
	for _, id := range strings.Split(only, ",") {
		id = strings.TrimSpace(id)
		if !reg.Has(id) {
			return nil, fmt.Errorf("--only: unknown check %q", id)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// baselineForm is how --baseline's help says a baseline file is written,
// for the agent and the client commands alike.
const baselineForm = `"CHECK-ID note" per line; "CHECK-ID? note" for one it fails in some runs only`

// readBaseline reads --baseline's file against reg (nil for no file).
func readBaseline[S any](reg *check.Registry[S], path string) (check.Baseline, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := check.ParseBaseline(f, reg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// emitOptions say how a finished grading is written out.
type emitOptions struct {
	transcripts string // --transcripts DIR
	html        string // --html FILE
	json        bool
	baseline    check.Baseline
	env         []string // the variables set, masked
}

// emit writes a grading out — transcript files, the HTML page, then the
// table or the JSON report — and returns acpcheck's exit status.
func emit(ctx context.Context, rep check.Report, gradeErr error, o emitOptions, stdout, stderr io.Writer) int {
	if gradeErr != nil {
		fmt.Fprintf(stderr, "acpcheck: %v\n", gradeErr)
		return check.ExitUsage
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		fmt.Fprintln(stderr, "acpcheck: interrupted")
		return check.ExitUsage
	}
	if o.transcripts != "" {
		if err := writeTranscripts(o.transcripts, rep.Results); err != nil {
			fmt.Fprintf(stderr, "acpcheck: --transcripts: %v\n", err)
			return check.ExitUsage
		}
		// The report keeps its usual shape: transcripts of what did not pass.
		for i, r := range rep.Results {
			if r.Status == check.StatusPass || r.Status == check.StatusSkip {
				rep.Results[i].Transcript = nil
			}
		}
	}
	rep.Env = o.env
	rep.ApplyBaseline(o.baseline)
	if o.html != "" {
		if err := writeHTML(o.html, rep); err != nil {
			fmt.Fprintf(stderr, "acpcheck: --html: %v\n", err)
			return check.ExitUsage
		}
	}
	var err error
	if o.json {
		err = check.WriteJSON(stdout, rep)
		// The verdict, naming the peer, for the person who ran it.
		fmt.Fprintf(stderr, "acpcheck: %s\n", check.SummaryLine(rep))
	} else {
		err = check.WriteTable(stdout, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "acpcheck: %v\n", err)
		return check.ExitUsage
	}
	return rep.Verdict.ExitCode()
}

// prepareOutputs creates --transcripts' directory before a grading runs,
// so a bad path fails at once rather than after minutes of checks.
func prepareOutputs(transcripts string) error {
	if transcripts == "" {
		return nil
	}
	if err := os.MkdirAll(transcripts, 0o755); err != nil {
		return fmt.Errorf("--transcripts: %w", err)
	}
	return nil
}

// writeHTML writes the report as one self-contained HTML page.
func writeHTML(path string, rep check.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = check.WriteHTML(f, rep)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
