package check

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// WireNeeds are what a check uses beyond JSON-RPC messages, which an agent
// served over the network (Target.URL) may not offer.
type WireNeeds uint8

const (
	// NeedsProcess: the agent's process itself (stdin to close, a signal
	// to send, its exit to wait for), which an agent served at a URL has
	// not.
	NeedsProcess WireNeeds = 1 << iota
	// NeedsRawLines: lines that are not JSON-RPC messages reaching the
	// agent as written; over Streamable HTTP the transport answers such a
	// body itself (TR-9) and the agent never sees it.
	NeedsRawLines
	// NeedsOwnHandshake: an initialize of the check's own (other params),
	// so the check cannot run on a process another check initialized
	// (Config.ShareProcess).
	NeedsOwnHandshake
	// EndsProcess (with NeedsProcess): the check ends the process it is
	// given (a signal, stdin closed), so with Config.ShareProcess it may
	// take the shared process as that process's last use, once no later
	// check of the grading can share it.
	EndsProcess
)

// unmet says why the agent served at url cannot be graded by a check with
// these needs, or "" when it can.
func (n WireNeeds) unmet(url string) string {
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
	// TierMandatory checks hold for every peer of the role graded; a
	// failure makes acpcheck exit non-zero, and a run where one did not run
	// is INCOMPLETE, never OK.
	TierMandatory Tier = "mandatory"
	// TierCapability checks run only when the peer advertises the
	// capability they exercise; otherwise they are skipped. A failure counts
	// like a mandatory one: the peer promised the capability.
	TierCapability Tier = "capability"
	// TierAdvisory checks report good practice; a failure never changes the
	// exit status.
	TierAdvisory Tier = "advisory"
)

// Status is the outcome of one check.
type Status string

const (
	// StatusPass: the peer did what the check requires.
	StatusPass Status = "pass"
	// StatusFail: the peer broke the requirement; the result carries the
	// wire transcript.
	StatusFail Status = "fail"
	// StatusSkip: the check did not run to a judgement — it does not apply
	// (capability not advertised), a prerequisite another check grades
	// failed, or the peer did not give it what it needed to observe (the
	// reason says which).
	StatusSkip Status = "skip"
	// StatusNeedsModel: the check needs a prompt turn and the agent failed it
	// with an authentication or backend error, so conformance could not be
	// judged. It never counts as a failure.
	StatusNeedsModel Status = "needs-model"
	// StatusNeedsCredential: the peer refused to work without a credential
	// (for an agent: initialize, authenticate or session/new answered
	// -32000): it is logged out, which says nothing about its conformance.
	// It never counts as a failure.
	StatusNeedsCredential Status = "needs-credential"
)

// Graded reports whether a check with this status judged its requirement:
// only a pass or a fail did.
func (s Status) Graded() bool { return s == StatusPass || s == StatusFail }

// Need is something a check needs beyond a freshly launched peer. When one
// check finds a need unavailable (an agent that is logged out, a model that
// does not answer), every later check that declares the need is reported
// with the same status without launching the peer again.
type Need string

// Check is one requirement acpcheck grades, for a subject S: the handle a
// check drives (for an agent, *Session). Each check runs against its own
// freshly launched peer, so one check's damage cannot leak into the next
// and its transcript holds only what it caused.
type Check[S any] struct {
	// ID is stable and used in baselines and --only, e.g. "prompt.cancel".
	ID string
	// Tier decides whether a failure changes the exit status.
	Tier Tier
	// Title is a one-line description of the requirement.
	Title string
	// Pins cites the requirement the check holds the peer to: the schema
	// definition or the protocol document and the text it says, briefly
	// (e.g. `schema StopReason "cancelled": MUST be returned when the
	// client sends session/cancel`).
	Pins string
	// Gate names the capability the check needs the peer to advertise
	// (e.g. "sessionCapabilities.list"): required of a TierCapability
	// check, allowed on an advisory one that only applies to peers with the
	// capability.
	Gate string
	// Needs lists what the check needs beyond a launched peer.
	Needs []Need
	// Wire says what of a launched process the check uses; over the
	// network (Target.URL) a check whose needs the transport cannot meet
	// is skipped, saying why.
	Wire WireNeeds
	// Run grades the peer behind s. It returns nil to pass, or an error made
	// with Failf, Skipf, NeedsModelf or NeedsCredentialf (any other error
	// is a failure).
	Run func(ctx context.Context, s S) error
}

// Result is one check's outcome.
type Result struct {
	ID    string `json:"id"`
	Tier  Tier   `json:"tier"`
	Title string `json:"title"`
	// Pins is the requirement the check holds the peer to (Check.Pins).
	Pins string `json:"pins,omitempty"`
	// Gate is the capability the check runs for (Check.Gate).
	Gate   string `json:"gate,omitempty"`
	Status Status `json:"status"`
	// Reason is one line saying why the check did not pass (empty on pass).
	Reason string `json:"reason,omitempty"`
	// NotLaunched is true when the check was not run at all because an
	// earlier check found one of its needs unavailable (Reason names it).
	NotLaunched bool `json:"notLaunched,omitempty"`
	// Inapplicable is true when the check cannot apply to how the peer is
	// reached (an agent served at a URL has no process; Streamable HTTP
	// answers a body that is not JSON itself): skipped, it is neither
	// graded nor missing, so it never makes a run INCOMPLETE.
	Inapplicable bool `json:"inapplicable,omitempty"`
	// Known is true when a baseline lists this check as a known failure and
	// it failed again.
	Known bool `json:"knownFailure,omitempty"`
	// Fixed is true when a baseline lists this check as a known failure but
	// it passed: the baseline is stale.
	Fixed bool `json:"fixedSinceBaseline,omitempty"`
	// Intermittent is true when a baseline lists this check as a failure
	// the peer shows in some runs only (see Baseline): Known when it
	// failed, and never Fixed.
	Intermittent bool `json:"intermittentInBaseline,omitempty"`
	// Regraded, when set, says how the check ended on an agent process it
	// shared with other checks (Config.ShareProcess) before it was graded
	// again on a fresh launch, whose result this is.
	Regraded string `json:"regraded,omitempty"`
	// Duration is how long the check took (in JSON, a Go duration string
	// such as "41.2ms").
	Duration time.Duration `json:"duration"`
	// Transcript is the wire as the check saw it; kept only when the check
	// did not pass (or when every transcript was asked for).
	Transcript []Line `json:"transcript,omitempty"`
	// recording is what a transcript file's header names
	// (WriteTranscriptFile).
	recording Recording
}

// outcome is the error type a check returns to say how it ended.
type outcome struct {
	status Status
	reason string
	// need is what turned out to be unavailable, for the statuses that say
	// a check could not be judged (StatusNeedsModel, StatusNeedsCredential).
	need Need
}

// Error renders the status and reason.
func (o *outcome) Error() string { return string(o.status) + ": " + o.reason }

// Failf ends a check as failed with a one-line reason.
func Failf(format string, args ...any) error {
	return &outcome{status: StatusFail, reason: fmt.Sprintf(format, args...)}
}

// Skipf ends a check that did not run to a judgement: it does not apply,
// or what it needed to observe did not happen. The reason says which.
func Skipf(format string, args ...any) error {
	return &outcome{status: StatusSkip, reason: fmt.Sprintf(format, args...)}
}

// NeedsModelf ends a check that could not be judged because the agent's
// model or backend was unavailable (need NeedModel).
func NeedsModelf(format string, args ...any) error {
	return &outcome{status: StatusNeedsModel, reason: fmt.Sprintf(format, args...), need: NeedModel}
}

// NeedsCredentialf ends a check that could not be judged because the peer
// refused to work without a credential; need is what the refusal withheld
// (for an agent, NeedHandshake when initialize refused, NeedSession when
// authenticate or session/new did).
func NeedsCredentialf(need Need, format string, args ...any) error {
	return &outcome{status: StatusNeedsCredential, reason: fmt.Sprintf(format, args...), need: need}
}

// Role names what a registry grades: the word reports put before the
// peer's name.
type Role string

// The roles acpcheck grades.
const (
	RoleAgent  Role = "agent"
	RoleClient Role = "client"
)

// Registry is an ordered set of checks with unique IDs, for one role.
type Registry[S any] struct {
	role   Role
	checks []Check[S]
}

// NewRegistry returns an empty registry of checks for role.
func NewRegistry[S any](role Role) *Registry[S] { return &Registry[S]{role: role} }

// Role is what the registry grades.
func (r *Registry[S]) Role() Role { return r.role }

// Register adds c. It panics on a duplicate or empty ID, a missing Run
// func, an unknown tier, or a capability check without a Gate, because
// those are programming errors in the registry's construction, never user
// input.
func (r *Registry[S]) Register(c Check[S]) {
	if c.ID == "" || c.Run == nil {
		panic("check: Register needs an ID and a Run func")
	}
	switch c.Tier {
	case TierMandatory:
		if c.Gate != "" {
			panic("check: mandatory check " + c.ID + " has a Gate")
		}
	case TierAdvisory:
	case TierCapability:
		if c.Gate == "" {
			panic("check: capability check " + c.ID + " names no Gate")
		}
	default:
		panic("check: check " + c.ID + " has unknown tier " + string(c.Tier))
	}
	if _, ok := r.Lookup(c.ID); ok {
		panic("check: duplicate check ID " + c.ID)
	}
	r.checks = append(r.checks, c)
}

// Checks returns the registered checks in registration order.
func (r *Registry[S]) Checks() []Check[S] { return slices.Clone(r.checks) }

// Lookup finds a check by ID.
func (r *Registry[S]) Lookup(id string) (Check[S], bool) {
	if i := r.index(id); i >= 0 {
		return r.checks[i], true
	}
	return Check[S]{}, false
}

// index is the check's position in registration order, -1 when absent.
func (r *Registry[S]) index(id string) int {
	return slices.IndexFunc(r.checks, func(c Check[S]) bool { return c.ID == id })
}

// Has reports whether a check with this ID is registered.
func (r *Registry[S]) Has(id string) bool {
	_, ok := r.Lookup(id)
	return ok
}
