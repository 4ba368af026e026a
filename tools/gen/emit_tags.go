package main

import (
	"fmt"
	"strings"
)

// tagSuffix ends the name of a union variant's tag constant:
// SessionUpdateAgentMessageChunkTag is the "sessionUpdate" value that
// selects *SessionUpdateAgentMessageChunk.
const tagSuffix = "Tag"

// tags prints tags.go: for every tagged union, one untyped string constant
// per tagged variant, the discriminator value that selects it. Code that
// reads or writes a tag itself (a raw filter, a switch on a tag gen did not
// decode) names it by constant instead of re-stating the string. Variants
// without a tag (a union's untagged fallback, its Unknown) get none.
func (e *emitter) tags(g *printer) error {
	names := map[string]*Variant{}
	for _, t := range e.m.Types {
		if t.Kind != TUnion || t.Union.Tag == "" {
			continue
		}
		var defs []string
		for _, v := range t.Union.Variants {
			if v.Tag == "" {
				continue
			}
			name := v.Type.Name + tagSuffix
			if prev, ok := names[name]; ok {
				return fmt.Errorf("tag constant %s names both %s's %q and %s's %q", name, prev.Union.Name, prev.Tag, t.Name, v.Tag)
			}
			if e.m.byName[name] != nil {
				return fmt.Errorf("tag constant %s collides with a type of that name", name)
			}
			names[name] = v
			defs = append(defs, fmt.Sprintf("// %s is the %q value that selects %s.\n%[1]s = %[4]q", name, t.Union.Tag, variantRecvType(v), v.Tag))
		}
		if len(defs) > 0 {
			g.P("// The %q tags of %s's variants.\nconst (\n%s\n)\n", t.Union.Tag, t.Name, strings.Join(defs, "\n"))
		}
	}
	return nil
}
