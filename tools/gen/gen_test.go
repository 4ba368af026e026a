package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// repoRoot is where schema/ and acpsdk/ live, seen from this package.
const repoRoot = "../.."

// generated is one generation of every pinned surface, shared by the
// tests (generation is slow under the race detector).
var generated = sync.OnceValues(func() ([]surfacePkg, error) { return generateAll(repoRoot, "") })

// generate generates the first surface of the pin at root (the tests'
// edited schemas pin one).
func generate(root string) (map[string][]byte, error) {
	pkgs, err := generateAll(root, "")
	if err != nil {
		return nil, err
	}
	return pkgs[0].files, nil
}

// TestSDK1_Generated regenerates every surface's package in memory and
// fails, with a diff, on any difference from the committed files (gopls
// TestGenerated style).
func TestSDK1_Generated(t *testing.T) {
	pkgs, err := generated()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		stale, err := diff(filepath.Join(repoRoot, p.surface.Go), p.surface.Go, p.files)
		if err != nil {
			t.Fatal(err)
		}
		if len(stale) > 0 {
			t.Errorf("%s is stale (run make generate):\n%s", p.surface.Go, strings.Join(stale, ""))
		}
	}
}

// TestSDK1_Stamped: every file is stamped with the schema's package,
// version and sha256. (Determinism is TestSDK1_Generated plus make
// check-generated: two separate runs must both reproduce the committed
// bytes.)
func TestSDK1_Stamped(t *testing.T) {
	pkgs, err := generated()
	if err != nil {
		t.Fatal(err)
	}
	pin, err := loadPin(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		for name, content := range p.files {
			first, _, _ := strings.Cut(string(content), "\n")
			for _, want := range []string{headerPrefix, p.surface.File, pin.Package, pin.Version, p.surface.SHA256, "DO NOT EDIT."} {
				if !strings.Contains(first, want) {
					t.Errorf("%s/%s: header %q lacks %q", p.surface.Go, name, first, want)
				}
			}
		}
	}
}

// TestSchemaPin: every committed schema is its pinned artifact, the
// runtime's surface is acpsdk/gen, and every schema the pinned package
// ships under schema/ in the repository is pinned.
func TestSchemaPin(t *testing.T) {
	pin, err := loadPin(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	pinned := map[string]bool{}
	for _, s := range pin.Surfaces {
		pinned[s.File] = true
		data, err := os.ReadFile(filepath.Join(repoRoot, s.File))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != s.SHA256 {
			t.Errorf("%s has sha256 %s, the pin says %s", s.File, got, s.SHA256)
		}
		if s.Runtime != (s.Go == "acpsdk/gen") {
			t.Errorf("%s: the runtime's surface is acpsdk/gen, the package users import", s.Go)
		}
	}
	files, err := filepath.Glob(filepath.Join(repoRoot, "schema", "v*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(repoRoot, f)
		if !pinned[filepath.ToSlash(rel)] {
			t.Errorf("%s is in the repository but not pinned", rel)
		}
	}
}

// TestSDK2_EveryDefHasAType: for every surface, each def of its schema
// has a Go type and each def with x-method is in the method table (the
// counts come from the schema file itself).
func TestSDK2_EveryDefHasAType(t *testing.T) {
	sfs, err := loadSchemas(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, sf := range sfs {
		m, err := buildModel(sf)
		if err != nil {
			t.Fatal(err)
		}
		defs, methodDefs := countDefs(t, filepath.Join(repoRoot, sf.surf.File))
		if len(sf.order) != defs {
			t.Errorf("%s: %d defs loaded, the file has %d", sf.surf.File, len(sf.order), defs)
		}
		for _, name := range sf.order {
			if m.defs[name] == nil || m.byName[m.defs[name].Name] != m.defs[name] {
				t.Errorf("%s: def %s has no Go type", sf.surf.File, name)
			}
		}
		annotated := 0
		for _, me := range m.Methods {
			annotated++
			if !me.Notification {
				annotated++
			}
		}
		if annotated != methodDefs {
			t.Errorf("%s: %d annotated defs in the method table, the file annotates %d", sf.surf.File, annotated, methodDefs)
		}
	}
}

// countDefs reads a schema file's $defs and how many carry x-method.
func countDefs(t *testing.T, file string) (defs, methodDefs int) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs map[string]map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, d := range doc.Defs {
		if _, ok := d["x-method"]; ok {
			methodDefs++
		}
	}
	return len(doc.Defs), methodDefs
}

// withSchema writes a copy of the repository's schema, changed by edit,
// with a matching pin, into a temporary root.
func withSchema(t *testing.T, edit func(defs map[string]any)) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "schema/v1/schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc["$defs"].(map[string]any))
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "schema/v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "schema/v1/schema.json"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(out)
	pin, _ := json.Marshal(Pin{Package: "test", Version: "0", Surfaces: []*Surface{
		{File: "schema/v1/schema.json", SHA256: hex.EncodeToString(sum[:]), Go: "acpsdk/gen", Runtime: true},
	}})
	if err := os.WriteFile(filepath.Join(root, "schema/pin.json"), pin, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func requireFail(t *testing.T, root string, want string) {
	t.Helper()
	_, err := generate(root)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("want an error containing %q, got %v", want, err)
	}
}

// TestSDK1_FailsOnUnknownExtensionKeyword: an x-* keyword the generator
// does not know stops generation, wherever it is.
func TestSDK1_FailsOnUnknownExtensionKeyword(t *testing.T) {
	root := withSchema(t, func(defs map[string]any) {
		props := defs["ContentChunk"].(map[string]any)["properties"].(map[string]any)
		props["messageId"].(map[string]any)["x-deserialize-something-new"] = true
	})
	requireFail(t, root, `unknown extension keyword "x-deserialize-something-new"`)
}

// TestSDK1_FailsOnUnsupportedConstruct: a JSON Schema keyword it does not
// handle stops generation.
func TestSDK1_FailsOnUnsupportedConstruct(t *testing.T) {
	root := withSchema(t, func(defs map[string]any) {
		defs["Plan"].(map[string]any)["patternProperties"] = map[string]any{"^x": map[string]any{}}
	})
	requireFail(t, root, `unsupported keyword "patternProperties"`)
	root = withSchema(t, func(defs map[string]any) {
		defs["SessionId"].(map[string]any)["format"] = "uuid"
	})
	requireFail(t, root, `unsupported string format "uuid"`)
}

// TestSDK1_GeneratesANewMethod: a schema bump that adds a method adds its
// constant, table entry and optional handler.
func TestSDK1_GeneratesANewMethod(t *testing.T) {
	root := withSchema(t, func(defs map[string]any) {
		meta := map[string]any{"type": []any{"object", "null"}, "additionalProperties": true}
		defs["ForkSessionRequest"] = map[string]any{
			"type": "object", "x-side": "agent", "x-method": "session/fork",
			"properties": map[string]any{"sessionId": map[string]any{"$ref": "#/$defs/SessionId"}, "_meta": meta},
			"required":   []any{"sessionId"},
		}
		defs["ForkSessionResponse"] = map[string]any{
			"type": "object", "x-side": "agent", "x-method": "session/fork",
			"properties": map[string]any{"sessionId": map[string]any{"$ref": "#/$defs/SessionId"}},
			"required":   []any{"sessionId"},
		}
	})
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	api, methods := string(files["api.go"]), string(files["methods.go"])
	for _, want := range []string{"type ForkSessionHandler interface", "func (p *AgentPeer) ForkSession("} {
		if !strings.Contains(api, want) {
			t.Errorf("api.go lacks %q", want)
		}
	}
	if !strings.Contains(methods, `MethodSessionFork = "session/fork"`) {
		t.Errorf("methods.go lacks the constant")
	}
}

// TestSDK1_FailsOnShaMismatch: the schema file must be the pinned one.
func TestSDK1_FailsOnShaMismatch(t *testing.T) {
	root := withSchema(t, func(map[string]any) {})
	if err := os.WriteFile(filepath.Join(root, "schema/pin.json"), []byte(`{"package":"p","version":"1","surfaces":[{"file":"schema/v1/schema.json","go":"acpsdk/gen","runtime":true,"sha256":"`+strings.Repeat("0", 64)+`"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	requireFail(t, root, "does not match the pin")
}

// TestSDK1_UnusedOverrideFails: the override table cannot rot.
func TestSDK1_UnusedOverrideFails(t *testing.T) {
	overrides["method:NoSuchDef"] = "X"
	defer delete(overrides, "method:NoSuchDef")
	requireFail(t, repoRoot, "unused override entries: method:NoSuchDef")
}

// TestSDK1_RequiredMethodsChecked: the baseline table names real methods.
func TestSDK1_RequiredMethodsChecked(t *testing.T) {
	requiredMethods["agent"] = append(requiredMethods["agent"], "session/teleport")
	defer func() { requiredMethods["agent"] = requiredMethods["agent"][:len(requiredMethods["agent"])-1] }()
	requireFail(t, repoRoot, "requiredMethods: agent method session/teleport is not in the schema")
}

func TestGoName(t *testing.T) {
	cases := map[string]string{
		"SessionId":          "SessionID",
		"ToolCallId":         "ToolCallID",
		"McpServerHttp":      "McpServerHTTP",
		"McpServerSse":       "McpServerSSE",
		"mimeType":           "MimeType",
		"_meta":              "Meta",
		"end_turn":           "EndTurn",
		"date-time":          "DateTime",
		"fs/read_text_file":  "FsReadTextFile",
		"$/cancel_request":   "CancelRequest",
		"Parse error":        "ParseError",
		"uri":                "URI",
		"ElicitationUrlMode": "ElicitationURLMode",
	}
	var keys []string
	for k := range cases {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, in := range keys {
		if got := goName(in); got != cases[in] {
			t.Errorf("goName(%q) = %q, want %q", in, got, cases[in])
		}
	}
	if got := commonWordSuffix([]string{"ElicitationSessionScope", "ElicitationRequestScope"}); got != "Scope" {
		t.Errorf("suffix %q", got)
	}
	if got := commonWordPrefix([]string{"ElicitationSessionScope", "ElicitationRequestScope"}); got != "Elicitation" {
		t.Errorf("prefix %q", got)
	}
}

// TestSDK2_KnownTagUnknownKeepsCatchAllDistinct: a tagged union whose known
// tags include "unknown" (v1 unstable's StateUpdate) names its catch-all
// variant after the catch-all branch's title, so both have a Go type.
func TestSDK2_KnownTagUnknownKeepsCatchAllDistinct(t *testing.T) {
	root := withSchema(t, func(defs map[string]any) {
		branch := func(tag string) map[string]any {
			return map[string]any{
				"type":       "object",
				"properties": map[string]any{"state": map[string]any{"type": "string", "const": tag}},
				"required":   []any{"state"},
				"allOf":      []any{map[string]any{"$ref": "#/$defs/Cost"}},
			}
		}
		defs["Cost"] = map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "string"}}}
		defs["StateUpdate"] = map[string]any{"anyOf": []any{
			branch("running"), branch("unknown"),
			map[string]any{
				"title": "other", "type": "object", "required": []any{"state"},
				"properties": map[string]any{"state": map[string]any{"type": "string"}},
				"not":        map[string]any{"anyOf": []any{map[string]any{"type": "object"}}},
			},
		}}
		props := defs["SessionNotification"].(map[string]any)["properties"].(map[string]any)
		props["state"] = map[string]any{"$ref": "#/$defs/StateUpdate"}
	})
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	types := string(files["types.go"])
	for _, want := range []string{"type StateUpdateUnknown Cost", "type StateUpdateOther struct"} {
		if !strings.Contains(types, want) {
			t.Errorf("types.go lacks %q", want)
		}
	}
}

// TestSDK2_ConstlessUnionIsDecidedByShape: a union of plain integer and
// string branches with no const among them (v2's RequestId) is a union
// decided by the JSON kind, not an open enum.
func TestSDK2_ConstlessUnionIsDecidedByShape(t *testing.T) {
	root := withSchema(t, func(defs map[string]any) {
		defs["RequestId"] = map[string]any{"anyOf": []any{
			map[string]any{"title": "Number", "type": "integer", "format": "int64"},
			map[string]any{"title": "Str", "type": "string"},
		}}
	})
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	types := string(files["types.go"])
	for _, want := range []string{"type RequestIDNumber int64", "type RequestIDStr string"} {
		if !strings.Contains(types, want) {
			t.Errorf("types.go lacks %q", want)
		}
	}
	if strings.Contains(types, "RequestIDNull") {
		t.Errorf("types.go still has the null variant")
	}
}

// TestSDK1_FailsOnUnionVariantPayload: a union def that is a tagged
// variant's payload is flattened into the variant (v2's SessionUpdate
// "state_update" over StateUpdate), which needs a tag to find its own
// variant by; a payload union decided by shape stops generation.
func TestSDK1_FailsOnUnionVariantPayload(t *testing.T) {
	root := withSchema(t, func(defs map[string]any) {
		u := defs["SessionUpdate"].(map[string]any)
		u["oneOf"] = append(u["oneOf"].([]any), map[string]any{
			"type":       "object",
			"properties": map[string]any{"sessionUpdate": map[string]any{"type": "string", "const": "nested"}},
			"required":   []any{"sessionUpdate"},
			"allOf":      []any{map[string]any{"$ref": "#/$defs/EmbeddedResourceResource"}},
		})
	})
	requireFail(t, root, "a variant's union payload EmbeddedResourceResource must be tagged")
}

// TestSDK4_MinItemsAndMinimumEnforced: v2's minItems and integer minimums
// the Go type does not imply are checked on decode; where the codec would
// not check them, generation stops.
func TestSDK4_MinItemsAndMinimumEnforced(t *testing.T) {
	root := withSchema(t, func(defs map[string]any) {
		props := defs["PromptRequest"].(map[string]any)["properties"].(map[string]any)
		props["prompt"].(map[string]any)["minItems"] = 1
		loc := defs["ToolCallLocation"].(map[string]any)["properties"].(map[string]any)
		loc["line"].(map[string]any)["minimum"] = 1
		defs["ImageContent"].(map[string]any)["properties"].(map[string]any)["data"].(map[string]any)["contentEncoding"] = "base64"
	})
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	codec := string(files["codec.go"]) + string(files["types.go"])
	// The checks are jsonx's; the descriptor carries the bounds, read
	// from the members' acp tags.
	for _, want := range []string{`minitems=1`, `min=1`, `jsonx.IntMinPtr(`} {
		if !strings.Contains(codec, want) {
			t.Errorf("codec.go and types.go lack %s", want)
		}
	}
	root = withSchema(t, func(defs map[string]any) {
		defs["SessionId"].(map[string]any)["minItems"] = 1
	})
	requireFail(t, root, "minItems on a non-array")
	root = withSchema(t, func(defs map[string]any) {
		defs["ImageContent"].(map[string]any)["properties"].(map[string]any)["data"].(map[string]any)["contentEncoding"] = "base32"
	})
	requireFail(t, root, `unsupported contentEncoding "base32"`)
}
