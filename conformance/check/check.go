package check

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Needs are what a check uses beyond JSON-RPC messages.
type Needs uint8

const (
	// NeedsProcess: the agent's process itself (stdin to close, a signal
	// to send, its exit to wait for), which an agent served at a URL has
	// not.
	NeedsProcess Needs = 1 << iota
	// NeedsRawLines: lines that are not JSON-RPC messages reaching the
	// agent as written; over Streamable HTTP the transport answers such a
	// body itself (TR-9) and the agent never sees it.
	NeedsRawLines
)

// unmet says why the agent served at url cannot be graded by a check with
// these needs, or "" when it can.
func (n Needs) unmet(url string) string {
	switch {
	case n&NeedsProcess != 0:
		return "needs the agent's process (stdin, signals, exit); the agent is served at " + url
	case n&NeedsRawLines != 0 && (strings.HasPrefix(url, "http://") || strings.HasPrefix(url, "https://")):
		return "over Streamable HTTP a body that is not JSON is answered 400 by the transport (TR-9) and never reaches the agent"
	}
	return ""
}

// Tier says how much a check's failure matters.
type Tier string

const (
	// TierMandatory checks hold for every ACP agent; a failure makes acpcheck
	// exit non-zero.
	TierMandatory Tier = "mandatory"
	// TierCapability checks run only when the agent advertises the capability
	// they exercise; otherwise they are skipped. A failure counts like a
	// mandatory one: the agent promised the capability.
	TierCapability Tier = "capability"
	// TierAdvisory checks report good practice; a failure never changes the
	// exit status.
	TierAdvisory Tier = "advisory"
)

// Status is the outcome of one check.
type Status string

const (
	// StatusPass: the agent did what the check requires.
	StatusPass Status = "pass"
	// StatusFail: the agent broke the requirement; the result carries the
	// wire transcript.
	StatusFail Status = "fail"
	// StatusSkip: the check does not apply (capability not advertised).
	StatusSkip Status = "skip"
	// StatusNeedsModel: the check needs a prompt turn and the agent failed it
	// with an authentication or backend error, so conformance could not be
	// judged. It never counts as a failure.
	StatusNeedsModel Status = "needs-model"
	// StatusNeedsCredential: the agent answered initialize or session/new
	// with -32000 (authentication required): it is logged out, which says
	// nothing about its conformance. It never counts as a failure, and the
	// later checks that meet the same refusal are skipped with its reason.
	StatusNeedsCredential Status = "needs-credential"
)

// Check is one requirement acpcheck grades. Each check runs against its own
// freshly launched agent process, so one check's damage cannot leak into the
// next and its transcript holds only what it caused.
type Check struct {
	// ID is stable and used in baselines, e.g. "session.cancel".
	ID string
	// Tier decides whether a failure changes the exit status.
	Tier Tier
	// Title is a one-line description of the requirement.
	Title string
	// Run grades the agent behind s. It returns nil to pass, or an error made
	// with Failf, Skipf or NeedsModelf (any other error is a failure).
	Run func(ctx context.Context, s *Session) error
	// Needs says what of a launched process the check uses; over the
	// network (Target.URL) a check whose needs the transport cannot meet
	// is skipped, saying why.
	Needs Needs
}

// Result is one check's outcome.
type Result struct {
	ID     string `json:"id"`
	Tier   Tier   `json:"tier"`
	Title  string `json:"title"`
	Status Status `json:"status"`
	// Reason is one line saying why the check did not pass (empty on pass).
	Reason string `json:"reason,omitempty"`
	// Known is true when a baseline lists this check as a known failure and
	// it failed again.
	Known bool `json:"knownFailure,omitempty"`
	// Fixed is true when a baseline lists this check as a known failure but
	// it passed: the baseline is stale.
	Fixed bool `json:"fixedSinceBaseline,omitempty"`
	// Duration is how long the check took (in JSON, a Go duration string
	// such as "41.2ms").
	Duration time.Duration `json:"duration"`
	// Transcript is the wire as the check saw it; kept only when the check
	// did not pass.
	Transcript []Line `json:"transcript,omitempty"`
}

// outcome is the error type a check returns to say how it ended.
type outcome struct {
	status Status
	reason string
}

// Error renders the status and reason.
func (o *outcome) Error() string { return string(o.status) + ": " + o.reason }

// Failf ends a check as failed with a one-line reason.
func Failf(format string, args ...any) error {
	return &outcome{status: StatusFail, reason: fmt.Sprintf(format, args...)}
}

// Skipf ends a check as not applicable.
func Skipf(format string, args ...any) error {
	return &outcome{status: StatusSkip, reason: fmt.Sprintf(format, args...)}
}

// NeedsModelf ends a check that could not be judged because the agent's
// model or backend was unavailable.
func NeedsModelf(format string, args ...any) error {
	return &outcome{status: StatusNeedsModel, reason: fmt.Sprintf(format, args...)}
}

// NeedsCredentialf ends a check that could not be judged because the agent
// refused to work without a credential.
func NeedsCredentialf(format string, args ...any) error {
	return &outcome{status: StatusNeedsCredential, reason: fmt.Sprintf(format, args...)}
}

// Registry is an ordered set of checks with unique IDs.
type Registry struct {
	checks []Check
}

// Register adds c. It panics on a duplicate or empty ID because that is a
// programming error in the registry's construction, never user input.
func (r *Registry) Register(c Check) {
	if c.ID == "" || c.Run == nil {
		panic("check: Register needs an ID and a Run func")
	}
	if _, ok := r.Lookup(c.ID); ok {
		panic("check: duplicate check ID " + c.ID)
	}
	r.checks = append(r.checks, c)
}

// Checks returns the registered checks in registration order.
func (r *Registry) Checks() []Check { return slices.Clone(r.checks) }

// Lookup finds a check by ID.
func (r *Registry) Lookup(id string) (Check, bool) {
	for _, c := range r.checks {
		if c.ID == id {
			return c, true
		}
	}
	return Check{}, false
}

// Counts tallies results for a summary line.
type Counts struct {
	Pass       int `json:"pass"`
	Fail       int `json:"fail"`
	Skip       int `json:"skip"`
	NeedsModel int `json:"needsModel"`
	// NeedsCredential counts the checks graded "needs a credential".
	NeedsCredential int `json:"needsCredential"`
	Known           int `json:"knownFailures"`
	Fixed           int `json:"fixedSinceBaseline"`
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
	}
	return c
}

// Failed reports whether rs should make acpcheck exit non-zero: a
// mandatory or capability-gated check failed and is not a known failure, or
// a baseline entry is stale because its check now passes.
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
