package acpsdk

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/acpsdk/gen/v1unstable"
	"acpkit.dev/acpsdk/gen/v2"
	"acpkit.dev/acpsdk/gen/v2unstable"
	"acpkit.dev/acpsdk/internal/surface"
)

// surfaceHooks is what the table test needs from a surface.
type surfaceHooks struct {
	schema               string
	newParams, newResult func(string) any
}

func hooksOf[A, C, AP, CP any](sf *surface.Surface[A, C, AP, CP]) surfaceHooks {
	s := surface.SpecOf(sf)
	return surfaceHooks{s.Schema, s.NewParams, s.NewResult}
}

// testedSurfaces is every generated surface in the module.
var testedSurfaces = []surfaceHooks{hooksOf(gen.Surface), hooksOf(v1unstable.Surface), hooksOf(v2.Surface), hooksOf(v2unstable.Surface)}

// TestSDK6_StrictTablesNameRealMembers: every surface has a strict-mode
// table, and every path a row names is a member of that surface's
// generated types (the initialize message, or each setup response), so a
// typo or a schema bump that renames a capability fails here rather than
// making strict mode refuse a call forever.
func TestSDK6_StrictTablesNameRealMembers(t *testing.T) {
	for _, sf := range testedSurfaces {
		rules := strictTables[sf.schema]
		require.NotNil(t, rules, "no strict-mode table for %s", sf.schema)
		for side, gates := range map[string]map[string]gate{"agent": rules.agent, "client": rules.client} {
			root := sf.newResult(methodInitialize)
			if side == "client" {
				root = sf.newParams(methodInitialize)
			}
			require.NotNil(t, root)
			for method, g := range gates {
				require.NotNil(t, sf.newParams(method), "%s: %s is not a method of the schema", sf.schema, method)
				paths := g.paths
				if g.byParams == nil {
					paths = []string{g.requires}
				}
				require.NotEmpty(t, paths, "%s %s", sf.schema, method)
				for _, p := range paths {
					if g.session {
						for setup := range rules.setup {
							require.True(t, hasMemberType(reflect.TypeOf(sf.newResult(setup)), p), "%s %s: %s result has no %s", sf.schema, method, setup, p)
						}
						continue
					}
					require.True(t, hasMemberType(reflect.TypeOf(root), p), "%s %s: the initialize message has no %s", sf.schema, method, p)
				}
			}
		}
		for setup := range rules.setup {
			require.NotNil(t, sf.newResult(setup), "%s: %s has no result", sf.schema, setup)
		}
	}
}

// hasMemberType reports whether path names a member of generated type t.
func hasMemberType(t reflect.Type, path string) bool {
	for name := range strings.SplitSeq(path, ".") {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		i, ok := fieldByTag(t, name)
		if !ok {
			return false
		}
		t = t.Field(i).Type
	}
	return true
}

// TestSDK6_StrictWithoutTableRefuses: strict mode on a surface acpsdk has
// no table for refuses every call but initialize, saying why, rather than
// gating nothing.
func TestSDK6_StrictWithoutTableRefuses(t *testing.T) {
	spec := *surface.SpecOf(gen.Surface)
	spec.Schema = "schema/v9/schema.json"
	spec.Result = nil
	sf := surface.New(spec)
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	agent := NewAgentSide(c2aR, a2cW, &minimalAgent{init: noCapsInit}, nil)
	client := NewClientSideOf(sf, a2cR, c2aW, gen.Client(&minimalClient{asked: make(chan struct{})}), &SideOptions{Strict: true})
	t.Cleanup(func() {
		require.NoError(t, client.Close())
		require.NoError(t, agent.Close())
	})
	ctx := t.Context()
	_, err := client.Agent().Initialize(ctx, &gen.InitializeRequest{ProtocolVersion: 1})
	require.NoError(t, err)
	_, err = client.Agent().NewSession(ctx, &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
	ce, ok := errors.AsType[*CapabilityError](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "a strict-mode table for schema/v9/schema.json", ce.Requires)
}
