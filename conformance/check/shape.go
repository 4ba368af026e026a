package check

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"github.com/segmentio/encoding/json"
)

// The SDK decodes capabilities leniently (the schema's
// x-deserialize-default-on-error turns a malformed capability into "not
// supported"), so a grader that only decoded would never notice an agent
// advertising `"loadSession": "yes"`. capabilityShapeErrors judges the raw
// JSON against the pinned schema's shapes instead.

type jsonKind int

const (
	kindBool jsonKind = iota
	kindObject
	kindObjectOrNull
	kindString
	kindArray
)

// String names the kind as reasons print it.
func (k jsonKind) String() string {
	return [...]string{"a boolean", "an object", "an object or null", "a string", "an array"}[k]
}

func kindOf(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	default:
		return "a number"
	}
}

func hasKind(v json.RawMessage, k jsonKind) bool {
	got := kindOf(v)
	switch k {
	case kindObjectOrNull:
		return got == "an object" || got == "null"
	default:
		return got == k.String()
	}
}

// shapeRule says which members of an object must have which JSON kind;
// members not listed are free (the schema allows extra keys).
type shapeRule struct {
	kind    jsonKind
	members map[string]shapeRule
}

var capabilityShapes = map[string]shapeRule{
	"agentCapabilities": {kind: kindObject, members: map[string]shapeRule{
		"loadSession": {kind: kindBool},
		"promptCapabilities": {kind: kindObject, members: map[string]shapeRule{
			"image":           {kind: kindBool},
			"audio":           {kind: kindBool},
			"embeddedContext": {kind: kindBool},
		}},
		"mcpCapabilities": {kind: kindObject, members: map[string]shapeRule{
			"http": {kind: kindBool},
			"sse":  {kind: kindBool},
		}},
		"sessionCapabilities": {kind: kindObject, members: map[string]shapeRule{
			"list":                  {kind: kindObjectOrNull},
			"delete":                {kind: kindObjectOrNull},
			"additionalDirectories": {kind: kindObjectOrNull},
			"resume":                {kind: kindObjectOrNull},
			"close":                 {kind: kindObjectOrNull},
		}},
		"auth": {kind: kindObject, members: map[string]shapeRule{
			"logout": {kind: kindObjectOrNull},
		}},
	}},
	"authMethods": {kind: kindArray},
	"agentInfo": {kind: kindObjectOrNull, members: map[string]shapeRule{
		"name":    {kind: kindString},
		"version": {kind: kindString},
	}},
}

// capabilityShapeErrors lists every member of an initialize result whose
// JSON kind differs from the schema's, as "path: want X, got Y".
func capabilityShapeErrors(result json.RawMessage) ([]string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(result, &top); err != nil {
		return nil, fmt.Errorf("initialize result is not a JSON object: %w", err)
	}
	var errs []string
	walkShapes("", top, capabilityShapes, &errs)
	return errs, nil
}

func walkShapes(prefix string, obj map[string]json.RawMessage, rules map[string]shapeRule, errs *[]string) {
	for _, name := range sortedKeys(rules) {
		v, ok := obj[name]
		if !ok {
			continue // an omitted capability means unsupported
		}
		rule := rules[name]
		path := prefix + name
		if !hasKind(v, rule.kind) {
			*errs = append(*errs, fmt.Sprintf("%s: want %s, got %s", path, rule.kind, kindOf(v)))
			continue
		}
		if len(rule.members) > 0 && kindOf(v) == "an object" {
			var inner map[string]json.RawMessage
			if json.Unmarshal(v, &inner) == nil {
				walkShapes(path+".", inner, rule.members, errs)
			}
		}
	}
}

func sortedKeys(m map[string]shapeRule) []string { return slices.Sorted(maps.Keys(m)) }
