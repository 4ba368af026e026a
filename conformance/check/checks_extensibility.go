package check

import (
	"context"

	"acpkit.dev/acpsdk/gen"
)

// MetaProbe is the _meta acpcheck attaches: a key in acpcheck's own
// namespace with a nested value, which an agent must accept without
// assuming anything about it.
var MetaProbe = map[string]any{"acpcheck.acpkit.dev/probe": map[string]any{"nested": []any{1, "two", nil}}}

// UnknownMember is the member acpcheck adds that no request type defines.
const UnknownMember = "acpcheckUnknownMember"

// addMember adds acpcheck's extra member to one object of a request.
type addMember func(obj map[string]any)

// withExtras runs initialize, session/new and one prompt turn whose
// params, client capabilities and text block each carry what add puts
// there; every step must be served as without it. A step that fails is
// tried again without the extras: when it fails that way too, another
// check grades the failure and this one skips.
func withExtras(ctx context.Context, s *Session, what string, add addMember) error {
	init := initializeParams(RequestedVersion)
	add(init)
	add(init["clientCapabilities"].(map[string]any))
	if _, err := s.initializeWith(ctx, init); err != nil {
		return reword(err, "initialize with "+what+": ")
	}
	newParams := func(extra bool) map[string]any {
		p := map[string]any{"cwd": s.Cwd, "mcpServers": []any{}}
		if extra {
			add(p)
		}
		return p
	}
	setup, err := s.createSessionWith(ctx, newParams(true))
	if err != nil {
		if _, plain := s.createSessionWith(ctx, newParams(false)); plain != nil {
			return prereq(plain)
		}
		return Failf("session/new with %s: %s; without it, it was served", what, reasonOf(err))
	}
	promptParams := func(extra bool) map[string]any {
		block := map[string]any{"type": gen.ContentBlockTextTag, "text": TurnPrompt}
		p := map[string]any{"sessionId": setup.ID, "prompt": []any{block}}
		if extra {
			add(block)
			add(p)
		}
		return p
	}
	turn := func(params map[string]any) error {
		from := s.Mark()
		id, err := s.Send(gen.MethodSessionPrompt, params)
		if err != nil {
			return Failf("session/prompt: %v", err)
		}
		_, err = s.finishTurn(ctx, from, id)
		return err
	}
	if err := turn(promptParams(true)); err != nil {
		if plain := turn(promptParams(false)); plain != nil {
			return prereq(plain)
		}
		return Failf("session/prompt with %s: %s; without it, it was served", what, reasonOf(err))
	}
	return nil
}

func checkMeta(ctx context.Context, s *Session) error {
	return withExtras(ctx, s, "_meta", func(obj map[string]any) { obj["_meta"] = MetaProbe })
}

func checkUnknownMembers(ctx context.Context, s *Session) error {
	return withExtras(ctx, s, "a member its type does not define", func(obj map[string]any) {
		obj[UnknownMember] = map[string]any{"ignored": true}
	})
}
