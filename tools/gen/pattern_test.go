package main

import (
	"regexp"
	"strings"
	"testing"
)

// modelOf resolves a schema given as its $defs.
func modelOf(defs string) (*Model, error) {
	data := []byte(`{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":` + defs + `}`)
	surf := &Surface{File: "test.json", Go: "golden/golden"}
	sf, err := parseSchema(Pin{Package: "golden", Version: "schema", Surfaces: []*Surface{surf}}, surf, "", 1, data)
	if err != nil {
		return nil, err
	}
	return buildModel(sf)
}

// TestSDK1_PatternWhereUnsupportedFails: a pattern the generator would
// not check stops generation, with its schema path, instead of being
// ignored.
func TestSDK1_PatternWhereUnsupportedFails(t *testing.T) {
	for name, c := range map[string]struct{ defs, want string }{
		"on an integer": {
			`{"A":{"type":"object","properties":{"n":{"type":"integer","format":"int32","pattern":"^1"}}}}`,
			`#/$defs/A/properties/n: pattern is only supported on a string`,
		},
		"without a type": {
			`{"A":{"type":"object","properties":{"s":{"pattern":"^1"}}}}`,
			`#/$defs/A/properties/s: pattern is only supported on a string`,
		},
		"on an object": {
			`{"A":{"type":"object","pattern":"x","properties":{"s":{"type":"string"}}}}`,
			`#/$defs/A: pattern is only supported on a string`,
		},
		"on an enum's catch-all branch": {
			`{"E":{"anyOf":[{"type":"string","const":"a"},{"title":"other","type":"string","pattern":"^x"}]}}`,
			`#/$defs/E/anyOf/1: pattern is only supported on a string`,
		},
		"on a union's tag": {
			`{"U":{"oneOf":[{"type":"object","properties":{"kind":{"type":"string","const":"a","pattern":"^a$"}},"required":["kind"]}]}}`,
			`#/$defs/U/oneOf/0/properties/kind: pattern is only supported on a string`,
		},
		"on a flattened union's tag declared by its object": {
			`{"O":{"type":"object","properties":{"kind":{"type":"string","pattern":"^[a-z]+$"}},"oneOf":[{"type":"object","properties":{"kind":{"type":"string","const":"a"}},"required":["kind"],"allOf":[{"$ref":"#/$defs/P"}]}]},"P":{"type":"object","properties":{"n":{"type":"string"}}}}`,
			`#/$defs/O/properties/kind: a flattened union's tag declared by its object must be a string without a default or pattern`,
		},
		"in syntax Go's regexp rejects": {
			`{"S":{"type":"string","pattern":"^(?!x)"}}`,
			`#/$defs/S: pattern "^(?!x)" is not a regular expression Go's regexp accepts`,
		},
		"without a plain sample": {
			`{"S":{"type":"string","pattern":"^[é-ü]$"}}`,
			`#/$defs/S: pattern "^[é-ü]$": no sample string found`,
		},
		"with a default it rejects": {
			`{"A":{"type":"object","properties":{"c":{"type":"string","pattern":"^[A-Z]{3}$","default":"usd"}}}}`,
			`#/$defs/A/properties/c/default: default "usd" does not match the pattern "^[A-Z]{3}$"`,
		},
		"checked by one name twice": {
			`{"Foo":{"type":"object","properties":{"barBaz":{"type":"string","pattern":"x"}}},"FooBar":{"type":"object","properties":{"baz":{"type":"string","pattern":"y"}}}}`,
			`the patterns of Foo.barBaz and FooBar.baz would both be checked by matchFooBarBaz`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := modelOf(c.defs)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error containing %q, got %v", c.want, err)
			}
		})
	}
}

// TestSDK1_PatternSamples: the sample string of a pattern (what the
// generated round-trip tests decode) matches it.
func TestSDK1_PatternSamples(t *testing.T) {
	for expr, want := range map[string]string{
		`^[A-Z]{3}$`:             "AAA",
		`[0-9]`:                  "0",
		`^#[a-z]+$`:              "#a",
		`^(eu|us)-[a-z]+-\d{1,}`: "eu-a-0",
		`^\w+@\w+\.com$`:         "0@0.com",
		`^[^a-z]x?$`:             "0",
		`(?i)^sku-\d{4}$`:        "SKU-0000",
	} {
		got, err := patternExample(expr, regexp.MustCompile(expr))
		if err != nil || got != want {
			t.Errorf("patternExample(%q) = %q, %v; want %q", expr, got, err, want)
		}
	}
}
