// Package cmdline holds the command-line conventions acpkit's commands
// share (acprun, acpcheck, refagent): GNU-style long flags through
// github.com/spf13/pflag, a "did you mean" for a mistyped flag, a short
// usage on error instead of every flag, --help on standard output with exit
// status 0, durations that take bare seconds, and the --version line.
//
// A command builds a FlagSet with New, defines its flags on the embedded
// *pflag.FlagSet (or with DurationVar), and calls Parse. Parse returns
// ErrHelp for -h/--help, when the command prints Help to standard output
// and exits 0, or a *UsageError, which Fail reports and maps to exit 2.
//
// For compatibility with the standard flag package these commands used
// before, a long flag written with one dash (-json, -only=x) is read as the
// long flag, unless the word is also a cluster of defined one-letter flags.
package cmdline

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// ExitUsage is the exit status of a command line that cannot run.
const ExitUsage = 2

// ErrHelp reports that -h or --help was asked for.
var ErrHelp = errors.New("help requested")

// UsageError is a command line a command cannot run.
type UsageError struct {
	// Reason says what is wrong.
	Reason string
	// Suggestion is a flag the user probably meant ("--json"), or "".
	Suggestion string
}

// Error returns the reason and the suggestion.
func (e *UsageError) Error() string {
	if e.Suggestion == "" {
		return e.Reason
	}
	return fmt.Sprintf("%s (did you mean %s?)", e.Reason, e.Suggestion)
}

// Usagef builds a *UsageError from a format.
func Usagef(format string, args ...any) *UsageError {
	return &UsageError{Reason: fmt.Sprintf(format, args...)}
}

// FlagSet is a pflag.FlagSet with acpkit's conventions.
type FlagSet struct {
	*pflag.FlagSet
	command  string
	synopsis string
}

// New returns an empty FlagSet for command ("acprun", "acprun replay").
// synopsis is the help text above the flags; its first line is the short
// usage Fail repeats, so it should be the command's usage line.
func New(command, synopsis string) *FlagSet {
	fs := pflag.NewFlagSet(command, pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // Help and Fail say everything
	fs.Usage = func() {}
	fs.SortFlags = false // the order they are defined in, which groups them
	return &FlagSet{FlagSet: fs, command: command, synopsis: synopsis}
}

// Parse parses args (without the program name): ErrHelp for -h or
// --help, a *UsageError for anything else wrong.
func (f *FlagSet) Parse(args []string) error {
	return f.mapError(f.FlagSet.Parse(f.compat(args)))
}

// ParseInterleaved parses flags wherever they stand among the positional
// arguments and hands each positional one to positional, in command-line
// order between the flags' own Set calls; after "--" every argument is
// positional.
func (f *FlagSet) ParseInterleaved(args []string, positional func(string)) error {
	f.SetInterspersed(false)
	args = f.compat(args)
	for {
		if err := f.mapError(f.FlagSet.Parse(args)); err != nil {
			return err
		}
		rest := f.Args()
		if len(rest) == 0 {
			return nil
		}
		if f.ArgsLenAtDash() == 0 {
			// Stopped at "--": everything after it is positional.
			for _, a := range rest {
				positional(a)
			}
			return nil
		}
		positional(rest[0])
		args = rest[1:]
	}
}

// compat rewrites a long flag written with one dash to two, for the
// commands' earlier standard-flag spelling; a flag's value, a word that is
// also a cluster of one-letter flags and everything after "--" are kept.
func (f *FlagSet) compat(args []string) []string {
	out := make([]string, 0, len(args))
	takesValue := false
	for i, a := range args {
		if takesValue {
			takesValue = false
			out = append(out, a)
			continue
		}
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			name, _, hasValue := strings.Cut(a[1:], "=")
			if fl := f.Lookup(name); fl != nil && len(name) > 1 && !f.isShortCluster(name) {
				a = "-" + a
				takesValue = !hasValue && fl.NoOptDefVal == ""
			}
		} else if strings.HasPrefix(a, "--") && !strings.Contains(a, "=") {
			if fl := f.Lookup(a[2:]); fl != nil {
				takesValue = fl.NoOptDefVal == ""
			}
		} else if len(a) == 2 && a[0] == '-' {
			if fl := f.ShorthandLookup(a[1:]); fl != nil {
				takesValue = fl.NoOptDefVal == ""
			}
		}
		out = append(out, a)
	}
	return out
}

// isShortCluster reports whether every letter of s is a defined shorthand.
func (f *FlagSet) isShortCluster(s string) bool {
	for i := range len(s) {
		if f.ShorthandLookup(s[i:i+1]) == nil {
			return false
		}
	}
	return true
}

// mapError turns pflag's errors into ErrHelp or a *UsageError with a
// suggestion for an unknown flag.
func (f *FlagSet) mapError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pflag.ErrHelp) {
		return ErrHelp
	}
	ue := &UsageError{Reason: err.Error()}
	var ne *pflag.NotExistError
	if errors.As(err, &ne) {
		name := ne.GetSpecifiedName()
		if sh := ne.GetSpecifiedShortnames(); sh != "" {
			ue.Reason = fmt.Sprintf("unknown flag -%s", sh)
			name = sh
		} else {
			ue.Reason = "unknown flag --" + name
		}
		ue.Suggestion = f.suggest(name)
	}
	return ue
}

// suggest is the defined flag nearest to name, as "--name", or "" when
// none is near: a flag it begins, or one within a few edits.
func (f *FlagSet) suggest(name string) string {
	best, bestDist := "", 0
	f.VisitAll(func(fl *pflag.Flag) {
		if fl.Hidden {
			return
		}
		d := editDistance(name, fl.Name)
		if strings.HasPrefix(fl.Name, name) && len(name) >= 3 {
			d = min(d, 1)
		}
		if limit := max(1, min(3, len(fl.Name)/3)); d <= limit && (best == "" || d < bestDist) {
			best, bestDist = fl.Name, d
		}
	})
	if best == "" {
		return ""
	}
	return "--" + best
}

// editDistance is the optimal-string-alignment distance between a and b:
// insertions, deletions, substitutions and swaps of two neighbours each
// cost one (flag names are ASCII, so bytes are letters).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// helpWidth is the width --help wraps the flags' descriptions to.
const helpWidth = 100

// Help writes the synopsis and every flag to w (for --help, on stdout):
// "-v, --verbose" or "--name VALUE", then the description wrapped under
// itself, with the default when it is not the zero value.
func (f *FlagSet) Help(w io.Writer) {
	type entry struct{ head, text string }
	var entries []entry
	width := 0
	f.VisitAll(func(fl *pflag.Flag) {
		if fl.Hidden {
			return
		}
		head := "      --" + fl.Name
		if fl.Shorthand != "" {
			head = "  -" + fl.Shorthand + ", --" + fl.Name
		}
		name, text := pflag.UnquoteUsage(fl)
		if fl.NoOptDefVal == "" && name != "" {
			head += " " + name
		}
		switch fl.DefValue {
		case "", "false", "0", "0s", "[]":
		default:
			text += fmt.Sprintf(" (default %s)", fl.DefValue)
		}
		entries = append(entries, entry{head, text})
		width = max(width, len(head))
	})
	var b strings.Builder
	b.WriteString(strings.TrimRight(f.synopsis, "\n") + "\n\nFlags:\n")
	for _, e := range entries {
		b.WriteString(e.head + strings.Repeat(" ", width+3-len(e.head)))
		col := width + 3
		for i, word := range strings.Fields(e.text) {
			if i > 0 && col+1+len(word) > helpWidth {
				b.WriteString("\n" + strings.Repeat(" ", width+3))
				col = width + 3
			} else if i > 0 {
				b.WriteByte(' ')
				col++
			}
			b.WriteString(word)
			col += len(word)
		}
		b.WriteByte('\n')
	}
	_, _ = io.WriteString(w, b.String())
}

// Fail reports err for a person on w — the command, the reason, a
// suggestion, the short usage and where the flags are listed — and returns
// ExitUsage.
func (f *FlagSet) Fail(w io.Writer, err error) int { return Report(w, f.command, f.synopsis, err) }

// Report is Fail for a command line rejected after parsing (a flag
// combination, a file a flag names): the command, err, the first line of
// synopsis and where the flags are listed; it returns ExitUsage.
func Report(w io.Writer, command, synopsis string, err error) int {
	_, _ = fmt.Fprintf(w, "%s: %v\n", command, err)
	usage, _, _ := strings.Cut(strings.TrimSpace(synopsis), "\n")
	_, _ = fmt.Fprintf(w, "%s\nRun '%s --help' for the flags.\n", usage, command)
	return ExitUsage
}

// DurationVar defines a duration flag that also takes a bare number as
// seconds ("5" is 5s, "0.5" 500ms); anything else is refused with "use a
// unit, e.g. 5s".
func (f *FlagSet) DurationVar(p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	f.Var(durationValue{p}, name, usage)
}

// Duration is DurationVar returning the variable.
func (f *FlagSet) Duration(name string, value time.Duration, usage string) *time.Duration {
	p := new(time.Duration)
	f.DurationVar(p, name, value, usage)
	return p
}

// durationValue is a time.Duration that takes bare seconds.
type durationValue struct{ p *time.Duration }

// ParseDuration reads a flag's duration: Go's syntax ("1m30s", "250ms") or
// a bare number of seconds.
func ParseDuration(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	secs, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(secs) || math.Abs(secs) > math.MaxInt64/float64(time.Second) {
		return 0, fmt.Errorf("%q is not a duration: use a unit, e.g. 5s", s)
	}
	return time.Duration(secs * float64(time.Second)), nil
}

func (d durationValue) Set(s string) error {
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d.p = v
	return nil
}

func (d durationValue) Type() string   { return "duration" }
func (d durationValue) String() string { return d.p.String() }

// Version is the line --version prints: the command, the module version
// `go install …@vX.Y.Z` stamps ("(devel)" for a build from a work tree),
// the VCS revision when the build recorded one, and the Go toolchain.
func Version(command string) string {
	version, revision := "(devel)", ""
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				revision = " " + s.Value
			}
		}
	}
	return fmt.Sprintf("%s %s%s (%s %s/%s)", command, version, revision, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
