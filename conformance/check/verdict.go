package check

// Verdict is a grading's one-word answer.
type Verdict string

const (
	// VerdictOK: every mandatory check selected ran and passed (known
	// failures excepted), and no advertised capability failed.
	VerdictOK Verdict = "OK"
	// VerdictFailed: a mandatory or advertised-capability check failed (and
	// is not a known failure), or a baseline entry's check now passes.
	VerdictFailed Verdict = "FAILED"
	// VerdictIncomplete: nothing failed, but at least one mandatory check
	// did not run to a judgement (logged out, no working model, nothing to
	// observe): the peer was not graded on all of the protocol.
	VerdictIncomplete Verdict = "INCOMPLETE"
)

// The exit statuses of acpcheck.
const (
	// ExitOK: every mandatory check passed (VerdictOK).
	ExitOK = 0
	// ExitFailed: a check failed, or a baseline is stale (VerdictFailed).
	ExitFailed = 1
	// ExitUsage: bad arguments, or the peer could not be launched at all.
	ExitUsage = 2
	// ExitIncomplete: nothing failed, but a mandatory check did not run
	// (VerdictIncomplete).
	ExitIncomplete = 3
)

// ExitCode is the exit status acpcheck ends with for v.
func (v Verdict) ExitCode() int {
	switch v {
	case VerdictOK:
		return ExitOK
	case VerdictIncomplete:
		return ExitIncomplete
	}
	return ExitFailed
}

// Judge returns the verdict for rs. FAILED wins over INCOMPLETE: a run
// that found a failure has said what matters most.
func Judge(rs []Result) Verdict {
	if Failed(rs) {
		return VerdictFailed
	}
	for _, r := range rs {
		if r.Tier == TierMandatory && !r.Status.Graded() && !r.Inapplicable {
			return VerdictIncomplete
		}
	}
	return VerdictOK
}

// Failed reports whether rs contain a failure that changes the exit
// status: a mandatory or capability-gated check failed and is not a known
// failure, or a baseline entry is stale because its check now passes.
func Failed(rs []Result) bool {
	for _, r := range rs {
		if r.Fixed {
			return true
		}
		if r.Status == StatusFail && !r.Known && r.Tier != TierAdvisory {
			return true
		}
	}
	return false
}

// Counts tallies results for a summary.
type Counts struct {
	Pass       int `json:"pass"`
	Fail       int `json:"fail"`
	Skip       int `json:"skip"`
	NeedsModel int `json:"needsModel"`
	// NeedsCredential counts the checks graded "needs a credential".
	NeedsCredential int `json:"needsCredential"`
	Known           int `json:"knownFailures"`
	Fixed           int `json:"fixedSinceBaseline"`
	// Intermittent counts the checks a baseline lists as failing in some
	// runs only, whatever they did in this one (each is also counted by
	// its status).
	Intermittent int `json:"intermittentInBaseline"`
}

// Count tallies rs.
func Count(rs []Result) Counts {
	var c Counts
	for _, r := range rs {
		switch r.Status {
		case StatusPass:
			c.Pass++
		case StatusFail:
			c.Fail++
		case StatusSkip:
			c.Skip++
		case StatusNeedsModel:
			c.NeedsModel++
		case StatusNeedsCredential:
			c.NeedsCredential++
		}
		if r.Known {
			c.Known++
		}
		if r.Fixed {
			c.Fixed++
		}
		if r.Intermittent {
			c.Intermittent++
		}
	}
	return c
}

// Coverage says how much of one tier a grading judged.
type Coverage struct {
	// Total is how many checks of the tier ran or were meant to run (one
	// that cannot apply to how the peer is reached is not among them).
	Total int `json:"total"`
	// Graded is how many of them judged their requirement (pass or fail).
	Graded int `json:"graded"`
	// NotGraded lists the others, each with why it did not run.
	NotGraded []NotGraded `json:"notGraded,omitempty"`
}

// NotGraded is a check that did not judge its requirement, and why.
type NotGraded struct {
	ID     string `json:"id"`
	Status Status `json:"status"`
	Reason string `json:"reason"`
}

// CoverageOf reports how many of rs's checks of tier were graded and why
// the others were not.
func CoverageOf(rs []Result, tier Tier) Coverage {
	var c Coverage
	for _, r := range rs {
		if r.Tier != tier || r.Inapplicable {
			continue
		}
		c.Total++
		if r.Status.Graded() {
			c.Graded++
			continue
		}
		c.NotGraded = append(c.NotGraded, NotGraded{ID: r.ID, Status: r.Status, Reason: r.Reason})
	}
	return c
}
