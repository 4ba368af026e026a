// Package hostile is the adapter's hostile runtime: an Agent Client
// Protocol runtime whose behaviour, turn by turn, is drawn from a small
// grammar by a seed. A Plan says what the runtime writes while each prompt
// is open (text chunks, tool calls, permission and unknown requests,
// malformed and oversize lines, stderr carrying a secret, delays), how it
// ends the turn (a stop reason, an error, a question only a person can
// answer, a wait for the caller's cancel, an early exit) and what it writes
// after its answer, between turns (more of the same, floods). Every text
// chunk and tool call carries a sequence number, unique and increasing in
// wire order across the whole session, so a test can check that events
// arrive in wire order with nothing lost or duplicated.
//
// The same seed gives the same Plan on both sides: the runtime draws it
// from its command line (Args), the test from the seed it passed. The
// runtime runs on a fakeagent.Agent, either as a fakeagent scenario in a
// child process (Scenario) or inside the test process over pipes
// (Launcher), where a testing/synctest bubble makes its delays free.
package hostile

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// SecretEnv names the environment variable whose value the runtime writes
// to its stderr: a credential the adapter must never repeat. The name marks
// it as one for the stderr masker (its "token").
const SecretEnv = "ACPKIT_HOSTILE_TOKEN"

// SessionID is the session id the runtime creates.
const SessionID = "hostile-1"

// Plan is a runtime's whole behaviour.
type Plan struct {
	Seed uint64
	// ExitBeforeInit: the runtime writes Stderr and exits with ExitCode
	// before it answers initialize (SS-3's early exit).
	ExitBeforeInit bool
	ExitCode       int
	Stderr         []StderrLine
	Turns          []Turn
}

// Turn is the runtime's behaviour for the prompt "turn <index>".
type Turn struct {
	// Pre is written while the prompt is open, Post after the answer.
	Pre  []Step
	End  Ending
	Post []Step
	// CancelAt is the sequence number of the tool call at which the test
	// cancels the turn's context (0: the test does not cancel). The tool
	// call is the last step of Pre, and its tool_result event is emitted
	// the moment it is read.
	CancelAt int
	// Abandon: before the turn, the test calls RunTurn with a context
	// that has ended (AbandonBefore) or ends while the turn is being
	// started (AbandonDuring); no turn may start for it (TU-2).
	Abandon Abandon
	// Settled: in memory, the test lets everything written before the
	// turn be read before it calls RunTurn (the turn then meets what the
	// runtime wrote between the turns as queued events and latched
	// endings); otherwise the two race.
	Settled bool
}

// Abandon is a call the test gives up on before its turn starts.
type Abandon int

// The abandoned calls.
const (
	AbandonNone Abandon = iota
	AbandonBefore
	AbandonDuring
)

// StepKind is one thing the runtime writes.
type StepKind int

// The steps.
const (
	// StepChunks: text chunks of one message (one messageId), each
	// "s<seq> ".
	StepChunks StepKind = iota
	// StepTool: a tool_call then its completed or failed update, titled
	// "s<seq>".
	StepTool
	// StepThought, StepPlan, StepUsage, StepCommands: updates without a
	// sequence number.
	StepThought
	StepPlan
	StepUsage
	StepCommands
	// StepRefusable: a permission request offering a reject option
	// (PM-1); Await makes the runtime wait for the answer.
	StepRefusable
	// StepPerson: a permission request with nothing to refuse (PM-2), or
	// an elicitation when Elicit is set (PM-3): an ending only a person
	// could avoid.
	StepPerson
	// StepUnknown: a request for a method the client does not implement
	// (PM-4); Await as for StepRefusable.
	StepUnknown
	// StepGarbage: a line that is not JSON-RPC (EV-10).
	StepGarbage
	// StepBadUpdate: a session/update whose params do not decode (EV-10).
	StepBadUpdate
	// StepMystery: an update of an unknown kind (EV-1).
	StepMystery
	// StepForeign: an update naming another session (EV-9).
	StepForeign
	// StepNullID: a session/update carrying "id": null (EV-12).
	StepNullID
	// StepStderr: lines on stderr, some carrying the secret.
	StepStderr
	// StepDelay: the runtime pauses for Delay.
	StepDelay
	// StepFlood: Count text chunks, each its own message, in one write.
	StepFlood
)

// Step is one step of a turn.
type Step struct {
	Kind StepKind
	// Seqs are the sequence numbers the step carries (chunks, tool,
	// flood).
	Seqs   []int
	Failed bool // StepTool: the update reports failed
	Await  bool // StepRefusable, StepUnknown
	Elicit bool // StepPerson
	Stderr []StderrLine
	Delay  time.Duration
}

// EndKind is how the runtime ends a turn.
type EndKind int

// The endings.
const (
	// EndAnswer answers with StopReason (possibly one outside the schema,
	// or "cancelled" nobody asked for).
	EndAnswer EndKind = iota
	// EndError answers with a JSON-RPC error (DI-3).
	EndError
	// EndUndecodable answers with a result that is not a prompt result
	// (DI-4).
	EndUndecodable
	// EndPerson asks what only a person could answer (Person), then reacts
	// as React says.
	EndPerson
	// EndAwaitCancel waits for the session/cancel the test's cancellation
	// sends, then reacts as React says.
	EndAwaitCancel
	// EndExit writes Stderr and exits with ExitCode, the prompt unanswered.
	EndExit
	// EndOversize writes a line over the connection's 10 MiB bound, then
	// answers end_turn.
	EndOversize
)

// React is what the runtime does once the adapter asked it to cancel.
type React int

// The reactions.
const (
	// ReactAnswerAtOnce answers end_turn right after the request that
	// ends the attempt, in the same write, before any cancel can arrive.
	ReactAnswerAtOnce React = iota
	// ReactCancelled waits for session/cancel, then answers cancelled.
	ReactCancelled
	// ReactEndTurn waits for session/cancel, then answers end_turn.
	ReactEndTurn
	// ReactNever never answers: the adapter's read timeout ends the wait.
	ReactNever
)

// Ending is how one turn ends.
type Ending struct {
	Kind       EndKind
	StopReason string
	Code       int
	Person     Step // EndPerson
	React      React
	ExitCode   int
	Stderr     []StderrLine
}

// StderrLine is one line the runtime writes to stderr.
type StderrLine struct {
	// Secret puts the secret in the line.
	Secret bool
	// Straddle makes the line longer than the collector's 64 KiB line
	// bound with the secret across the cut: Straddle bytes of it before
	// the 65,536th byte.
	Straddle int
	// Escape splits the secret with a terminal escape sequence, which the
	// collector strips before it masks.
	Escape bool
}

// Size bounds a generated Plan.
type Size struct {
	// Turns is the most turns; a plan has 1 to Turns.
	Turns int
	// Steps is the most steps before and after an answer.
	Steps int
	// Flood is the most chunks a flood writes, at least three quarters
	// of it (0: no floods).
	Flood int
	// Delay is the longest delay step.
	Delay time.Duration
	// Steady leaves out early exits, oversize lines, floods, delays and
	// endings that wait out a read timeout: a soak of many turns on one
	// session, or many sessions at once.
	Steady bool
}

// MaxLineBytes is the stderr collector's line bound, which Straddle cuts
// across.
const MaxLineBytes = 64 << 10

// Generate draws a Plan from seed.
func Generate(seed uint64, size Size) Plan {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc908)), size: size}
	p := Plan{Seed: seed}
	if !size.Steady && g.r.IntN(40) == 0 {
		p.ExitBeforeInit, p.ExitCode = true, 1+g.r.IntN(120)
		p.Stderr = g.stderrLines()
		return p
	}
	n := 1 + g.r.IntN(max(size.Turns, 1))
	for range n {
		p.Turns = append(p.Turns, g.turn())
	}
	return p
}

type gen struct {
	r    *rand.Rand
	size Size
	seq  int
}

func (g *gen) next() int { g.seq++; return g.seq }

// pick returns an index drawn by weights.
func (g *gen) pick(weights ...int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	n := g.r.IntN(total)
	for i, w := range weights {
		if n < w {
			return i
		}
		n -= w
	}
	return len(weights) - 1
}

func (g *gen) turn() Turn {
	var t Turn
	if g.r.IntN(8) == 0 {
		t.Abandon = Abandon(1 + g.r.IntN(2))
	}
	t.Settled = g.r.IntN(2) == 0
	for range g.r.IntN(g.size.Steps + 1) {
		t.Pre = append(t.Pre, g.step(false))
	}
	t.End = g.ending()
	if t.End.Kind == EndAwaitCancel {
		tool := Step{Kind: StepTool, Seqs: []int{g.next()}}
		t.Pre = append(t.Pre, tool)
		t.CancelAt = tool.Seqs[0]
	}
	if t.End.Kind != EndExit {
		for range g.r.IntN(g.size.Steps/2 + 1) {
			t.Post = append(t.Post, g.step(true))
		}
	}
	return t
}

func (g *gen) step(between bool) Step {
	floods := 0
	if between && g.size.Flood > 0 && !g.size.Steady {
		floods = 5
	}
	persons, delays := 0, 6
	if between {
		persons = 3
	}
	if g.size.Steady {
		delays = 0
	}
	switch g.pick(30, 10, 3, 2, 2, 1, 8, persons, 5, 3, 2, 2, 2, 2, 5, delays, floods) {
	case 0:
		s := Step{Kind: StepChunks}
		for range 1 + g.r.IntN(3) {
			s.Seqs = append(s.Seqs, g.next())
		}
		return s
	case 1:
		return Step{Kind: StepTool, Seqs: []int{g.next()}, Failed: g.r.IntN(4) == 0}
	case 2:
		return Step{Kind: StepThought}
	case 3:
		return Step{Kind: StepPlan}
	case 4:
		return Step{Kind: StepUsage}
	case 5:
		return Step{Kind: StepCommands}
	case 6:
		return Step{Kind: StepRefusable, Await: !between && g.r.IntN(2) == 0}
	case 7:
		return Step{Kind: StepPerson, Elicit: g.r.IntN(2) == 0}
	case 8:
		return Step{Kind: StepUnknown, Await: !between && g.r.IntN(2) == 0}
	case 9:
		return Step{Kind: StepGarbage}
	case 10:
		return Step{Kind: StepBadUpdate}
	case 11:
		return Step{Kind: StepMystery}
	case 12:
		return Step{Kind: StepForeign}
	case 13:
		return Step{Kind: StepNullID}
	case 14:
		return Step{Kind: StepStderr, Stderr: g.stderrLines()}
	case 15:
		d := time.Millisecond
		if g.size.Delay > 0 {
			d = time.Duration(1 + g.r.Int64N(int64(g.size.Delay)))
		}
		return Step{Kind: StepDelay, Delay: d}
	default:
		s := Step{Kind: StepFlood}
		n := g.size.Flood*3/4 + g.r.IntN(g.size.Flood/4+1)
		for range n {
			s.Seqs = append(s.Seqs, g.next())
		}
		return s
	}
}

func (g *gen) stderrLines() []StderrLine {
	var out []StderrLine
	for range 1 + g.r.IntN(3) {
		l := StderrLine{Secret: g.r.IntN(2) == 0}
		if l.Secret {
			switch g.r.IntN(4) {
			case 0:
				l.Straddle = 1 + g.r.IntN(32)
			case 1:
				l.Escape = true
			}
		}
		out = append(out, l)
	}
	return out
}

func (g *gen) ending() Ending {
	exits := 4
	if g.size.Steady {
		exits = 0
	}
	switch g.pick(30, 10, 3, 4, 3, 20, 14, exits, exits/2) {
	case 0:
		return Ending{Kind: EndAnswer, StopReason: "end_turn"}
	case 1:
		reasons := []string{"refusal", "max_tokens", "max_turn_requests", "over_the_moon"}
		return Ending{Kind: EndAnswer, StopReason: reasons[g.r.IntN(len(reasons))]}
	case 2:
		return Ending{Kind: EndAnswer, StopReason: "cancelled"} // nobody asked
	case 3:
		return Ending{Kind: EndError, Code: []int{-32603, -32000, 7}[g.r.IntN(3)]}
	case 4:
		return Ending{Kind: EndUndecodable}
	case 5:
		// Half of them answer at once: the answer then races the
		// adapter's cancel, the pattern of issue #22's stale cancel.
		react := ReactAnswerAtOnce
		if g.r.IntN(2) == 0 {
			react = g.react()
		}
		return Ending{Kind: EndPerson, Person: Step{Kind: StepPerson, Elicit: g.r.IntN(2) == 0}, React: react}
	case 6:
		return Ending{Kind: EndAwaitCancel, React: g.react()}
	case 7:
		return Ending{Kind: EndExit, ExitCode: g.r.IntN(3), Stderr: g.stderrLines()}
	default:
		return Ending{Kind: EndOversize}
	}
}

// react draws a reaction to a cancel, never ReactNever when steady.
func (g *gen) react() React {
	if g.size.Steady {
		return React(1 + g.r.IntN(2))
	}
	return React(1 + g.r.IntN(3))
}

// Args is the runtime's command line for p's seed and size: what Parse
// reads back.
func Args(seed uint64, size Size) []string {
	a := []string{
		"seed=" + strconv.FormatUint(seed, 10),
		"turns=" + strconv.Itoa(size.Turns),
		"steps=" + strconv.Itoa(size.Steps),
		"flood=" + strconv.Itoa(size.Flood),
		"delay=" + size.Delay.String(),
	}
	if size.Steady {
		a = append(a, "steady")
	}
	return a
}

// Parse reads Args back; extra arguments (key=value) are returned in
// rest.
func Parse(args []string) (seed uint64, size Size, rest map[string]string, err error) {
	rest = map[string]string{}
	for _, arg := range args {
		k, v, _ := strings.Cut(arg, "=")
		switch k {
		case "seed":
			seed, err = strconv.ParseUint(v, 10, 64)
		case "turns":
			size.Turns, err = strconv.Atoi(v)
		case "steps":
			size.Steps, err = strconv.Atoi(v)
		case "flood":
			size.Flood, err = strconv.Atoi(v)
		case "delay":
			size.Delay, err = time.ParseDuration(v)
		case "steady":
			size.Steady = true
		default:
			rest[k] = v
		}
		if err != nil {
			return 0, Size{}, nil, fmt.Errorf("hostile: argument %q: %w", arg, err)
		}
	}
	return seed, size, rest, nil
}

// Prompt is the prompt text that runs turn i.
func Prompt(i int) string { return "turn " + strconv.Itoa(i) }

// String renders a plan for a failure message.
func (p Plan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan seed=%d", p.Seed)
	if p.ExitBeforeInit {
		fmt.Fprintf(&b, " exit-before-init=%d", p.ExitCode)
	}
	for i, t := range p.Turns {
		fmt.Fprintf(&b, "\n  turn %d: pre=%s end=%s post=%s", i, steps(t.Pre), t.End, steps(t.Post))
		if t.CancelAt > 0 {
			fmt.Fprintf(&b, " cancel-at=s%d", t.CancelAt)
		}
		if t.Abandon != AbandonNone {
			fmt.Fprintf(&b, " abandon=%s", [...]string{"", "before", "during"}[t.Abandon])
		}
	}
	return b.String()
}

func steps(ss []Step) string {
	parts := make([]string, 0, len(ss))
	for _, s := range ss {
		parts = append(parts, s.String())
	}
	return "[" + strings.Join(parts, " ") + "]"
}

var stepNames = [...]string{"chunks", "tool", "thought", "plan", "usage", "commands", "refusable", "person", "unknown", "garbage", "badupdate", "mystery", "foreign", "nullid", "stderr", "delay", "flood"}

func (s Step) String() string {
	name := stepNames[s.Kind]
	switch {
	case s.Kind == StepFlood:
		return fmt.Sprintf("flood(s%d..s%d)", s.Seqs[0], s.Seqs[len(s.Seqs)-1])
	case len(s.Seqs) > 0:
		return fmt.Sprintf("%s%v", name, s.Seqs)
	case s.Kind == StepDelay:
		return "delay(" + s.Delay.String() + ")"
	case s.Kind == StepPerson && s.Elicit:
		return "person(elicit)"
	case s.Await:
		return name + "(await)"
	}
	return name
}

var endNames = [...]string{"answer", "error", "undecodable", "person", "await-cancel", "exit", "oversize"}
var reactNames = [...]string{"at-once", "cancelled", "end_turn", "never"}

func (e Ending) String() string {
	switch e.Kind {
	case EndAnswer:
		return "answer(" + e.StopReason + ")"
	case EndError:
		return "error(" + strconv.Itoa(e.Code) + ")"
	case EndPerson:
		return "person(" + e.Person.String() + "," + reactNames[e.React] + ")"
	case EndAwaitCancel:
		return "await-cancel(" + reactNames[e.React] + ")"
	case EndExit:
		return "exit(" + strconv.Itoa(e.ExitCode) + ")"
	}
	return endNames[e.Kind]
}
