package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
)

// A string's pattern keyword is checked on decode: the member's (or the
// def's) decoder is a generated match<Name> that decodes the string and
// fails with ErrInvalidValue when the pattern does not match it. The rule
// holds wherever a string schema is resolved (resolver.typed); a pattern
// anywhere else fails generation (checkConsumed), so none is ignored.

// pattern reads n's pattern keyword, nil when it has none.
func (r *resolver) pattern(n *node) (*Pattern, error) {
	raw, ok := n.rawKids["pattern"]
	if !ok {
		return nil, nil
	}
	var expr string
	if err := json.Unmarshal(raw, &expr); err != nil {
		return nil, fmt.Errorf("%s: pattern is not a string: %w", n.path, err)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		// Go's regexp is RE2: no lookaround, no backreferences.
		return nil, fmt.Errorf("%s: pattern %q is not a regular expression Go's regexp accepts: %w", n.path, expr, err)
	}
	example, err := patternExample(expr, re)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.path, err)
	}
	p := &Pattern{Expr: expr, Example: example, re: re}
	r.patterns = append(r.patterns, p)
	r.consume(n, "pattern")
	return p, nil
}

// patternExample is a short string that re (expr) matches, built from its
// syntax tree: the first branch of each alternation, each repetition at
// its minimum, each class's first letter or digit. It is printable ASCII
// that JSON and Go write alike, or an error.
func patternExample(expr string, re *regexp.Regexp) (string, error) {
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	ok := writeExample(&b, tree.Simplify())
	s := b.String()
	if !ok || !re.MatchString(s) || !plainKey(s) {
		return "", fmt.Errorf("pattern %q: no sample string found (a short printable ASCII string that matches, for the generated round-trip tests)", expr)
	}
	return s, nil
}

// writeExample writes a string re matches; false when it finds none.
func writeExample(b *strings.Builder, re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		r, ok := classExample(re.Rune)
		if !ok {
			return false
		}
		b.WriteRune(r)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('a')
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpStar, syntax.OpQuest:
	case syntax.OpCapture, syntax.OpPlus, syntax.OpAlternate:
		return writeExample(b, re.Sub[0])
	case syntax.OpRepeat:
		for range re.Min {
			if !writeExample(b, re.Sub[0]) {
				return false
			}
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !writeExample(b, sub) {
				return false
			}
		}
	default: // OpNoMatch
		return false
	}
	return true
}

// classExample is a rune of the class (lo-hi pairs): the first letter or
// digit in it, else its first printable ASCII rune.
func classExample(ranges []rune) (rune, bool) {
	for _, want := range []func(rune) bool{
		func(c rune) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' },
		func(c rune) bool { return c > ' ' && c < 0x7f },
	} {
		for i := 0; i+1 < len(ranges); i += 2 {
			for c := ranges[i]; c <= ranges[i+1] && c < 0x80; c++ {
				if want(c) {
					return c, true
				}
			}
		}
	}
	return 0, false
}

// namePatterns gives each pattern the Go name of its check, after the
// object member or def it belongs to, and lists them in the model.
func (r *resolver) namePatterns() error {
	names := map[string]*Pattern{}
	var name func(ref *Ref, goName, where string) error
	name = func(ref *Ref, goName, where string) error {
		switch {
		case ref.Pattern != nil:
			if prev, ok := names[goName]; ok {
				return fmt.Errorf("the patterns of %s and %s would both be checked by match%s", prev.Where, where, goName)
			}
			ref.Pattern.Name, ref.Pattern.Where = goName, where
			names[goName] = ref.Pattern
		case ref.List:
			return name(ref.Elem, goName+"Item", where+" items")
		case ref.Map:
			return name(ref.Elem, goName+"Value", where+" values")
		}
		return nil
	}
	for _, t := range r.m.Types {
		var err error
		switch t.Kind {
		case TStruct:
			for _, f := range t.Fields {
				if err = name(f.Ref, t.Name+f.Go, t.Name+"."+f.JSON); err != nil {
					break
				}
			}
		case TScalar:
			err = name(t.Scalar, t.Name, t.Name)
		}
		if err != nil {
			return err
		}
	}
	for _, p := range r.patterns {
		if p.Name == "" {
			return fmt.Errorf("pattern %q: no object member or def holds it", p.Expr)
		}
		r.m.Patterns = append(r.m.Patterns, p)
	}
	sort.Slice(r.m.Patterns, func(i, j int) bool { return r.m.Patterns[i].Name < r.m.Patterns[j].Name })
	return nil
}

// consumedKeywords are the keywords that change what decodes, so that a
// rule must take every occurrence: checkConsumed fails on one that no
// rule took (a pattern on an enum's branch, on a union's tag, on an
// object), instead of generating a decoder that ignores it.
var consumedKeywords = []string{"pattern"}

// consume records that a rule took the keyword kw of n.
func (r *resolver) consume(n *node, kw string) { r.consumed[n.path+" "+kw] = true }

// checkConsumed fails on an occurrence of a consumedKeywords keyword that
// no rule took.
func (r *resolver) checkConsumed() error {
	for _, at := range r.sf.keywordPaths(consumedKeywords) {
		if !r.consumed[at.path+" "+at.keyword] {
			return fmt.Errorf("%s: %s is only supported on a string that is an object member, list item, map value, def or union branch", at.path, at.keyword)
		}
	}
	return nil
}
