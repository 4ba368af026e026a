package stderrlog

import (
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Sanitize removes terminal escape sequences (CSI, OSC, DCS/SOS/PM/APC
// strings and two-byte escapes, also in their 8-bit C1 forms) and every
// other control character from s; a tab becomes a space and invalid UTF-8
// becomes U+FFFD. What is left is safe to print on one log line (SS-3).
func Sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
			i++
		case r == '\t':
			b.WriteByte(' ')
			i += n
		case r == 0x1b: // ESC: an escape sequence, or a lone ESC
			i = skipEscape(s, i+n)
		case r == 0x9b: // C1 CSI
			i = skipCSI(s, i+n)
		case r == 0x9d, r == 0x90, r == 0x98, r == 0x9e, r == 0x9f: // C1 OSC, DCS, SOS, PM, APC
			i = skipString(s, i+n)
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
			i += n
		default:
			b.WriteString(s[i : i+n])
			i += n
		}
	}
	return b.String()
}

// skipEscape skips what follows an ESC at s[i:] and returns the index after
// the sequence.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(s, i+1)
	}
	// nF/Fp/Fe/Fs escapes: intermediates 0x20-0x2F, then one final byte.
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipCSI skips parameter and intermediate bytes and the final byte.
func skipCSI(s string, i int) int {
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipString skips a control string up to its terminator (BEL, ESC \ or
// C1 ST) or the end of the line.
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case strings.HasPrefix(s[i:], "\u009c"):
			return i + len("\u009c")
		}
		i++
	}
	return i
}

// Mask is the text that replaces a secret.
const Mask = "***"

var (
	// secretAssignment is key=value or key: value whose key names a
	// credential; the value is masked, the key kept for diagnosis.
	secretAssignment = regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(?:api[_-]?key|token|secret|passw(?:or)?d|credential|auth)[A-Za-z0-9_.-]*["']?\s*[:=]\s*)("[^"]*"|'[^']*'|[^\s,;&"']+)`)
	// authScheme is an Authorization header value.
	authScheme = regexp.MustCompile(`(?i)(\bbearer|authorization:\s*basic)(\s+)[A-Za-z0-9._~+/=-]{6,}`)
	// urlUserinfo is user:password@ in a URL.
	urlUserinfo = regexp.MustCompile(`(://)[^/\s:@]+:[^/\s@]+@`)
	// knownToken matches credential formats that identify themselves.
	knownToken = regexp.MustCompile(`\b(?:sk-[A-Za-z0-9_-]{16,}|gh[posur]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|ya29\.[0-9A-Za-z_-]{10,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})`)
	// shapes are the patterns Mask finds credentials by.
	shapes = [4]*regexp.Regexp{shapeURL: urlUserinfo, shapeScheme: authScheme, shapeAssignment: secretAssignment, shapeToken: knownToken}
	// secretName marks environment variables whose values are secrets.
	secretName = regexp.MustCompile(`(?i)(api[_-]?key|token|secret|passw(or)?d|credential|auth)`)
)

// minSecretLen keeps short environment values (say "1" or "true") from
// being masked all over a line.
const minSecretLen = 8

// Masker replaces secrets in text: values of the environment variables
// whose names mark them as credentials (the runtime inherits them and may
// echo them), credential-looking assignments, authorization schemes, URL
// passwords and self-identifying token formats. It never changes once
// built, so any number of goroutines may use one.
type Masker struct {
	values []string // longest first, so a value containing another wins
}

// cutLookahead is how far past a line cut a credential that Mask finds by
// its shape (an assignment, a scheme, a URL password, a token format) is
// looked for; see Cut.
const cutLookahead = 4 << 10

// cutLookback is how far before a line cut Cut looks for credentials by
// their shape.
const cutLookback = 16 << 10

// Lookahead is how many bytes past a cut Cut must see to find every
// secret across it: the longest environment value, plus room for the
// credentials found by their shape.
func (m *Masker) Lookahead() int {
	n := cutLookahead
	if len(m.values) > 0 {
		n += len(m.values[0])
	}
	return n
}

// Cut returns the largest cut at or before n that falls inside no secret
// of s, so that s[:Cut(s, n)] holds only whole secrets, which Mask then
// masks: a line kept only up to a bound must not keep the head of a
// credential whose tail was cut off (SS-2, SS-3). s must run Lookahead
// bytes past n, or to its end. The shapes are looked for from
// cutLookback before the cut: a credential longer than that is taken to
// start there.
func (m *Masker) Cut(s string, n int) int {
	for moved := true; moved; {
		moved = false
		inside := func(start, end int) {
			if start < n && n < end {
				n, moved = start, true
			}
		}
		lo := max(n-cutLookback, 0)
		for _, v := range m.values {
			for i := max(n-len(v), 0); ; i++ {
				j := strings.Index(s[i:], v)
				if j < 0 || i+j >= n {
					break
				}
				i += j
				inside(i, i+len(v))
			}
		}
		window := s[lo:]
		for shape, may := range shapesIn(window) {
			if !may {
				continue
			}
			for _, loc := range shapes[shape].FindAllStringIndex(window, -1) {
				inside(lo+loc[0], lo+loc[1])
			}
		}
	}
	return n
}

// NewMasker builds a Masker for environ (KEY=value entries, as from
// os.Environ).
func NewMasker(environ []string) *Masker {
	m := &Masker{}
	seen := map[string]bool{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || len(v) < minSecretLen || !secretName.MatchString(k) || seen[v] {
			continue
		}
		seen[v] = true
		m.values = append(m.values, v)
	}
	sort.Slice(m.values, func(i, j int) bool { return len(m.values[i]) > len(m.values[j]) })
	return m
}

// DefaultMasker masks this process's environment secrets (what a child
// inherits, SP-1), as the environment is now. Building a Masker runs a
// regular expression over every variable's name, about a tenth of a
// millisecond a session start, on the path between the runtime's spawn and
// its initialize; so the last one is kept with the environment it was
// built from and returned again while the environment is the same.
func DefaultMasker() *Masker {
	env := os.Environ()
	defaultMasker.mu.Lock()
	defer defaultMasker.mu.Unlock()
	if defaultMasker.m == nil || !slices.Equal(env, defaultMasker.environ) {
		defaultMasker.environ, defaultMasker.m = env, NewMasker(env)
	}
	return defaultMasker.m
}

// defaultMasker is DefaultMasker's last Masker and its environment.
var defaultMasker struct {
	mu      sync.Mutex
	environ []string
	m       *Masker
}

// Mask returns s with secrets replaced by Mask. Each pattern runs only when
// a cheap keyword test says it can match, so ordinary output costs little.
func (m *Masker) Mask(s string) string {
	for _, v := range m.values {
		s = strings.ReplaceAll(s, v, Mask)
	}
	may := shapesIn(s)
	if may[shapeURL] {
		s = urlUserinfo.ReplaceAllString(s, "${1}"+Mask+"@")
	}
	if may[shapeScheme] {
		s = authScheme.ReplaceAllString(s, "${1}${2}"+Mask)
	}
	if may[shapeAssignment] {
		s = secretAssignment.ReplaceAllStringFunc(s, func(match string) string {
			sub := secretAssignment.FindStringSubmatch(match)
			switch strings.ToLower(sub[2]) {
			case strings.ToLower(Mask), "bearer", "basic":
				// already masked, or an authorization scheme whose
				// credential authScheme masked
				return match
			}
			return sub[1] + Mask
		})
	}
	if may[shapeToken] && containsAny(s, "sk-", "gh", "github_pat_", "xox", "AKIA", "AIza", "ya29.", "eyJ") {
		s = knownToken.ReplaceAllString(s, Mask)
	}
	return s
}

// The credential shapes, in the order Mask applies them; shapes holds
// their patterns in that order.
const (
	shapeURL = iota
	shapeScheme
	shapeAssignment
	shapeToken
)

// shapesIn says which shapes can match s, by a cheap keyword test, so
// ordinary output runs no pattern.
func shapesIn(s string) [4]bool {
	lower := strings.ToLower(s)
	return [4]bool{
		shapeURL:        strings.Contains(lower, "://"),
		shapeScheme:     strings.Contains(lower, "bearer") || strings.Contains(lower, "basic"),
		shapeAssignment: containsAny(lower, "key", "token", "secret", "passw", "credential", "auth"),
		shapeToken:      containsAny(s, "sk-", "gh", "github_pat_", "xox", "AKIA", "AIza", "ya29.", "eyJ"),
	}
}

// containsAny reports whether s contains any of subs.
func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
