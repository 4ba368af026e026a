package main

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// tagSuffix ends the name of a union variant's tag constant:
// SessionUpdateAgentMessageChunkTag is the "sessionUpdate" value that
// selects *SessionUpdateAgentMessageChunk.
const tagSuffix = "Tag"

// tags emits, for every tagged union, one untyped string constant per
// tagged variant: the discriminator value that selects it. Code that reads
// or writes a tag itself (a raw filter, a switch on a tag gen did not
// decode) names it by constant instead of re-stating the string. Variants
// without a tag (a union's untagged fallback, its Unknown) get none.
func (e *emitter) tags(f *jen.File) error {
	names := map[string]*Variant{}
	for _, t := range e.m.Types {
		if t.Kind != TUnion || t.Union.Tag == "" {
			continue
		}
		var defs []jen.Code
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
			recv := v.Type.Name
			if v.Ptr {
				recv = "*" + recv
			}
			defs = append(defs, comment(fmt.Sprintf("%s is the %q value that selects %s.", name, t.Union.Tag, recv)).
				Id(name).Op("=").Lit(v.Tag))
		}
		if len(defs) == 0 {
			continue
		}
		f.Comment(fmt.Sprintf("The %q tags of %s's variants.", t.Union.Tag, t.Name))
		f.Const().Defs(defs...)
		f.Line()
	}
	return nil
}
