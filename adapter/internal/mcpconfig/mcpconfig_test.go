package mcpconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/adapter/internal/contract"
	"acpkit.dev/adapter/internal/fault"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// writeFile puts content in a temp file and returns its path.
func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// encode renders servers and encodes the array as session/new would.
func encode(t *testing.T, servers []Server, http bool) (string, bool) {
	t.Helper()
	wire, withheld := Render(servers, http)
	b, err := json.Marshal(wire)
	require.NoError(t, err)
	return string(b), withheld
}

const generated = `{
  "mcpServers": {
    "zeta": {"url": "https://z.example/mcp", "type": "sse", "headers": {"X-B": "2", "Authorization": "Bearer t"}},
    "sortie-tools": {"type": "stdio", "command": "/usr/local/bin/sortie", "args": ["mcp", "--workspace", "/w"], "env": {"SORTIE_TOKEN": "s", "A_VAR": "a"}},
    "alpha": {"command": "/bin/alpha"}
  }
}`

func TestMCP2_RemoteLaunchHoldsNoServers(t *testing.T) {
	for _, path := range []string{writeFile(t, generated), writeFile(t, "not json"), "/nonexistent/mcp.json"} {
		servers, err := Load(path, true)
		require.NoError(t, err)
		assert.Empty(t, servers)
	}
}

func TestMCP3_EmptyPathMeansNoServers(t *testing.T) {
	servers, err := Load("", false)
	require.NoError(t, err)
	assert.Empty(t, servers)
	out, _ := encode(t, servers, true)
	assert.Equal(t, "[]", out)
}

func TestMCP4_ServersSortedByName(t *testing.T) {
	servers, err := Load(writeFile(t, generated), false)
	require.NoError(t, err)
	require.Len(t, servers, 3)
	assert.Equal(t, []string{"alpha", "sortie-tools", "zeta"}, []string{servers[0].Name, servers[1].Name, servers[2].Name})
	assert.Equal(t, Server{
		Name: "sortie-tools", Type: "stdio", Command: "/usr/local/bin/sortie",
		Args: []string{"mcp", "--workspace", "/w"},
		Env:  []Pair{{"A_VAR", "a"}, {"SORTIE_TOKEN", "s"}},
	}, servers[1])
	assert.Equal(t, Server{
		Name: "zeta", Type: "sse", URL: "https://z.example/mcp",
		Headers: []Pair{{"Authorization", "Bearer t"}, {"X-B", "2"}},
	}, servers[2])
}

func TestMCP4_MissingMCPServersMeansNone(t *testing.T) {
	for _, doc := range []string{`{}`, `{"other": 1}`, ` {"mcpServers": {}} `} {
		servers, err := Parse([]byte(doc))
		require.NoError(t, err, doc)
		assert.Empty(t, servers, doc)
	}
}

func TestMCP4_ParseRules(t *testing.T) {
	cases := []struct{ doc, err string }{
		{``, "invalid JSON: unexpected end of JSON input"},
		{`{"mcpServers": {}`, "invalid JSON: unexpected end of JSON input"},
		{`{} {}`, "invalid JSON: invalid character '{' after top-level value"},
		{`null`, "document: must not be null"},
		{`[]`, "document: expected an object, got array"},
		{`{"mcpServers": null}`, "mcpServers: must not be null"},
		{`{"mcpServers": []}`, "mcpServers: expected an object, got array"},
		{`{"mcpServers": {}, "mcpServers": {}}`, `document: duplicate key "mcpServers"`},
		{`{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`, `mcpServers: duplicate key "a"`},
		{`{"mcpServers": {"a": "cmd"}}`, `mcpServers["a"]: expected an object, got string`},
		{`{"mcpServers": {"a": null}}`, `mcpServers["a"]: must not be null`},
		{`{"mcpServers": {"": {"command": "x"}}}`, `mcpServers[""]: a server name must not be empty`},
		{`{"mcpServers": {"a": {"command": "x", "cwd": "/"}}}`, `mcpServers["a"]: unknown key "cwd" (want type, command, args, env, url, headers or enabled)`},
		{`{"mcpServers": {"a": {}}}`, `mcpServers["a"]: has neither command nor url; exactly one is required`},
		{`{"mcpServers": {"a": {"command": "x", "url": "http://u"}}}`, `mcpServers["a"]: has both command and url; exactly one is allowed`},
		{`{"mcpServers": {"a": {"type": "stdio", "url": "http://u"}}}`, `mcpServers["a"]: type "stdio" needs command`},
		{`{"mcpServers": {"a": {"type": "http", "command": "x"}}}`, `mcpServers["a"]: type "http" needs url`},
		{`{"mcpServers": {"a": {"type": "sse", "command": "x"}}}`, `mcpServers["a"]: type "sse" needs url`},
		{`{"mcpServers": {"a": {"type": "streamable-http", "command": "x"}}}`, `mcpServers["a"]: type "streamable-http" needs url`},
		{`{"mcpServers": {"a": {"type": "websocket", "url": "ws://u"}}}`, `mcpServers["a"].type: unknown server type "websocket" (want stdio, http, sse or streamable-http)`},
		{`{"mcpServers": {"a": {"type": 1, "url": "ws://u"}}}`, `mcpServers["a"].type: expected a string, got number`},
		{`{"mcpServers": {"a": {"command": ""}}}`, `mcpServers["a"].command: must not be empty`},
		{`{"mcpServers": {"a": {"command": ["x"]}}}`, `mcpServers["a"].command: expected a string, got array`},
		{`{"mcpServers": {"a": {"url": " "}}}`, `mcpServers["a"].url: must not be empty`},
		{`{"mcpServers": {"a": {"command": "x", "args": "a b"}}}`, `mcpServers["a"].args: expected an array of strings, got string`},
		{`{"mcpServers": {"a": {"command": "x", "args": ["a", 2]}}}`, `mcpServers["a"].args[1]: expected a string, got number`},
		{`{"mcpServers": {"a": {"command": "x", "args": null}}}`, `mcpServers["a"].args: expected an array of strings, got null`},
		{`{"mcpServers": {"a": {"command": "x", "env": ["A=1"]}}}`, `mcpServers["a"].env: expected an object, got array`},
		{`{"mcpServers": {"a": {"command": "x", "env": {"A": 1}}}}`, `mcpServers["a"].env["A"]: expected a string, got number`},
		{`{"mcpServers": {"a": {"command": "x", "env": {"A": "1", "A": "2"}}}}`, `mcpServers["a"].env: duplicate key "A"`},
		{`{"mcpServers": {"a": {"url": "http://u", "headers": {"H": true}}}}`, `mcpServers["a"].headers["H"]: expected a string, got boolean`},
		{`{"mcpServers": {"a": {"command": "x", "enabled": "no"}}}`, `mcpServers["a"].enabled: expected a boolean, got string`},
		{`{"mcpServers": {"a": {"url": "http://u", "args": []}}}`, `mcpServers["a"]: args and env apply only to a command server`},
		{`{"mcpServers": {"a": {"command": "x", "headers": {}}}}`, `mcpServers["a"]: headers apply only to a url server`},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.doc))
		var pe *ParseError
		require.ErrorAs(t, err, &pe, c.doc)
		assert.Equal(t, c.err, err.Error(), c.doc)
	}
}

func TestMCP5_ParseFailureIsResponseError(t *testing.T) {
	_, err := Load(writeFile(t, `{"mcpServers": []}`), false)
	var f *fault.Error
	require.ErrorAs(t, err, &f)
	assert.Equal(t, contract.KindResponseError, f.Kind)
	assert.Equal(t, "parse MCP config: mcpServers: expected an object, got array", f.Message)
	assert.Equal(t, f.Message, f.Error(), "the cause is not repeated")
	var pe *ParseError
	assert.ErrorAs(t, err, &pe)

	_, err = Load(filepath.Join(t.TempDir(), "missing.json"), false)
	require.ErrorAs(t, err, &f)
	assert.Equal(t, contract.KindResponseError, f.Kind)
	assert.True(t, strings.HasPrefix(f.Message, "parse MCP config: open "), f.Message)
	assert.ErrorIs(t, err, os.ErrNotExist)

	big := writeFile(t, `{"mcpServers": {}, "pad": "`+strings.Repeat("x", MaxFileBytes)+`"}`)
	_, err = Load(big, false)
	require.ErrorAs(t, err, &f)
	assert.Equal(t, "parse MCP config: file is larger than 16777216 bytes", f.Message)
}

func TestMCP6_DisabledEntryDropped(t *testing.T) {
	servers, err := Parse([]byte(`{"mcpServers": {
		"off": {"command": "x", "enabled": false},
		"on": {"command": "y", "enabled": true},
		"default": {"url": "http://u"}}}`))
	require.NoError(t, err)
	require.Len(t, servers, 2)
	assert.Equal(t, "default", servers[0].Name)
	assert.Equal(t, "on", servers[1].Name)
}

func TestMCP7_StdioWireShape(t *testing.T) {
	servers, err := Parse([]byte(`{"mcpServers": {
		"bare": {"command": "/bin/bare"},
		"full": {"type": "stdio", "command": "/bin/full", "args": ["-v"], "env": {"Z": "26", "A": "1"}}}}`))
	require.NoError(t, err)
	out, withheld := encode(t, servers, false)
	assert.False(t, withheld)
	assert.JSONEq(t, `[
		{"name":"bare","command":"/bin/bare","args":[],"env":[]},
		{"name":"full","command":"/bin/full","args":["-v"],"env":[{"name":"A","value":"1"},{"name":"Z","value":"26"}]}
	]`, out)
	assert.NotContains(t, out, `"type"`)
	// Member order is the wire's, name first.
	assert.True(t, strings.HasPrefix(out, `[{"name":"bare","command":"/bin/bare","args":[],"env":[]}`), out)
}

func TestMCP8_URLServersRenderAsHTTP(t *testing.T) {
	servers, err := Parse([]byte(`{"mcpServers": {
		"a": {"type": "sse", "url": "https://a/sse", "headers": {"X-Z": "z", "X-A": "a"}},
		"b": {"type": "streamable-http", "url": "https://b/mcp"},
		"c": {"type": "http", "url": "https://c/mcp"},
		"d": {"url": "https://d/mcp"}}}`))
	require.NoError(t, err)
	out, withheld := encode(t, servers, true)
	assert.False(t, withheld)
	assert.JSONEq(t, `[
		{"type":"http","name":"a","url":"https://a/sse","headers":[{"name":"X-A","value":"a"},{"name":"X-Z","value":"z"}]},
		{"type":"http","name":"b","url":"https://b/mcp","headers":[]},
		{"type":"http","name":"c","url":"https://c/mcp","headers":[]},
		{"type":"http","name":"d","url":"https://d/mcp","headers":[]}
	]`, out)
	assert.NotContains(t, out, `"sse"`)
}

func TestMCP9_HTTPWithheldWithoutCapability(t *testing.T) {
	servers, err := Load(writeFile(t, generated), false)
	require.NoError(t, err)
	out, withheld := encode(t, servers, false)
	assert.True(t, withheld)
	assert.NotContains(t, out, "zeta")
	// Nothing withheld when no URL server exists, whatever the capability.
	_, withheld = Render(servers[:2], false)
	assert.False(t, withheld)
}

func TestMCP10_StdioNeverWithheld(t *testing.T) {
	servers, err := Load(writeFile(t, generated), false)
	require.NoError(t, err)
	for _, http := range []bool{false, true} {
		out, _ := encode(t, servers, http)
		assert.Contains(t, out, `"name":"alpha"`)
		assert.Contains(t, out, `"name":"sortie-tools"`)
	}
}

func TestMCP11_RenderedListIsNeverNull(t *testing.T) {
	for _, servers := range [][]Server{nil, {}, {{Name: "h", URL: "http://u"}}} {
		wire, _ := Render(servers, false)
		require.NotNil(t, wire)
		b, err := json.Marshal(gen.NewSessionRequest{Cwd: "/w", McpServers: wire})
		require.NoError(t, err)
		assert.Equal(t, `{"cwd":"/w","mcpServers":[]}`, string(b))
	}
}

func TestMCP12_MergedOperatorFileRendersLikeGenerated(t *testing.T) {
	// The worker merges the operator's servers with sortie-tools into one
	// generated file; the adapter sees just another configuration.
	merged := `{"mcpServers": {
		"sortie-tools": {"command": "/usr/local/bin/sortie", "args": ["mcp"]},
		"operator-db": {"command": "/opt/db-mcp", "env": {"DB_URL": "postgres://x"}},
		"operator-web": {"type": "http", "url": "https://tools.example/mcp"}}}`
	servers, err := Load(writeFile(t, merged), false)
	require.NoError(t, err)
	out, withheld := encode(t, servers, true)
	assert.False(t, withheld)
	assert.JSONEq(t, `[
		{"name":"operator-db","command":"/opt/db-mcp","args":[],"env":[{"name":"DB_URL","value":"postgres://x"}]},
		{"type":"http","name":"operator-web","url":"https://tools.example/mcp","headers":[]},
		{"name":"sortie-tools","command":"/usr/local/bin/sortie","args":["mcp"],"env":[]}
	]`, out)
}

func TestMCP13_DeclarationCarriesNoTrustFlag(t *testing.T) {
	servers, err := Load(writeFile(t, generated), false)
	require.NoError(t, err)
	wire, _ := Render(servers, true)
	for _, w := range wire {
		b, err := json.Marshal(w)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		if _, ok := w.(*gen.McpServerHTTP); ok {
			assert.ElementsMatch(t, []string{"type", "name", "url", "headers"}, keys)
		} else {
			assert.ElementsMatch(t, []string{"name", "command", "args", "env"}, keys)
		}
	}
}

// FuzzParse holds the parser to its contract on any input: a *ParseError
// or servers that obey MCP-4, sorted, each rendering to valid JSON.
func FuzzParse(f *testing.F) {
	seeds := []string{
		generated, `{}`, `null`, `[]`, `{"mcpServers": null}`,
		`{"mcpServers": {"a": {"command": "x", "enabled": false}}}`,
		`{"mcpServers": {"a": {"type": "sse", "url": "u", "headers": {"h": "v"}}}}`,
		`{"mcpServers": {"a": {"command": "x", "args": ["\u0000", "é"], "env": {"\ud800": "x"}}}}`,
		`{"mcpServers": {"b": {"url": "u"}, "a": {"command": "c"}}}`,
		`{"mcpServers": {"a": {"command": "x"}, "a": {}}}`,
		"{\"mcpServers\": {\"a\": {\"command\": \"\xff\"}}}",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		servers, err := Parse(data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *ParseError: %T %v", err, err)
			}
			return
		}
		for i, s := range servers {
			if (s.Command == "") == (s.URL == "") {
				t.Fatalf("server %q: need exactly one of command and url", s.Name)
			}
			if i > 0 && servers[i-1].Name >= s.Name {
				t.Fatalf("not sorted: %q then %q", servers[i-1].Name, s.Name)
			}
		}
		for _, http := range []bool{false, true} {
			wire, _ := Render(servers, http)
			b, err := json.Marshal(wire)
			if err != nil || !json.Valid(b) {
				t.Fatalf("render does not encode: %v %s", err, b)
			}
		}
	})
}
