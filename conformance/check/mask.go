package check

import (
	"cmp"
	"slices"
	"strings"

	"github.com/segmentio/encoding/json"
)

// Masked is what a secret is replaced with in reasons and transcripts.
const Masked = "***"

// MinSecretLen is the shortest value masked. Shorter values (a "1", an
// "on", a "true") are settings rather than credentials, and masking them
// would garble every transcript in which the same letters occur.
const MinSecretLen = 6

// masker replaces secrets wherever they occur: as given and as they
// appear inside a JSON string (escaped), since transcripts are JSON lines.
type masker struct {
	r *strings.Replacer
}

func newMasker(secrets []string) *masker {
	var forms []string
	for _, s := range secrets {
		if len(s) < MinSecretLen {
			continue
		}
		forms = append(forms, s)
		if b, err := json.Marshal(s); err == nil {
			if esc := string(b[1 : len(b)-1]); esc != s {
				forms = append(forms, esc)
			}
		}
	}
	if len(forms) == 0 {
		return &masker{}
	}
	// Longest first: a secret that contains another is masked whole.
	slices.SortFunc(forms, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Masked)
	}
	return &masker{r: strings.NewReplacer(pairs...)}
}

// text masks s; a nil masker masks nothing.
func (m *masker) text(s string) string {
	if m == nil || m.r == nil {
		return s
	}
	return m.r.Replace(s)
}

// lines masks every line's text, in place.
func (m *masker) lines(ls []Line) []Line {
	if m == nil || m.r == nil {
		return ls
	}
	for i := range ls {
		ls[i].Text = m.r.Replace(ls[i].Text)
		if ls[i].raw != nil {
			ls[i].raw = []byte(m.r.Replace(string(ls[i].raw)))
		}
	}
	return ls
}
