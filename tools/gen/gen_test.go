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

// generated is one generation of the repository's schema, shared by the
// tests (generation is slow under the race detector).
var generated = sync.OnceValues(func() (map[string][]byte, error) { return generate(repoRoot) })

// TestSDK1_Generated regenerates acpsdk/gen in memory and fails on any
// difference from the committed files (gopls TestGenerated style).
func TestSDK1_Generated(t *testing.T) {
	files, err := generated()
	if err != nil {
		t.Fatal(err)
	}
	stale, err := diff(filepath.Join(repoRoot, outDir), files)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Fatalf("acpsdk/gen is stale (run make generate): %v", stale)
	}
}

// TestSDK1_Stamped: every file is stamped with the schema's package,
// version and sha256. (Determinism is TestSDK1_Generated plus make
// check-generated: two separate runs must both reproduce the committed
// bytes.)
func TestSDK1_Stamped(t *testing.T) {
	files, err := generated()
	if err != nil {
		t.Fatal(err)
	}
	pin, err := loadPin(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		first, _, _ := strings.Cut(string(content), "\n")
		for _, want := range []string{headerPrefix, pin.Package, pin.Version, pin.SHA256, "DO NOT EDIT."} {
			if !strings.Contains(first, want) {
				t.Errorf("%s: header %q lacks %q", name, first, want)
			}
		}
	}
}

// TestSchemaPin: the committed schema is the pinned artifact.
func TestSchemaPin(t *testing.T) {
	pin, err := loadPin(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if pin.Package != "@agentclientprotocol/sdk" || pin.Version != "2.4.0" || pin.File != "schema/v1/schema.json" {
		t.Fatalf("unexpected pin %+v", pin)
	}
	data, err := os.ReadFile(filepath.Join(repoRoot, pin.File))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != pin.SHA256 {
		t.Fatalf("%s has sha256 %s, the pin says %s", pin.File, got, pin.SHA256)
	}
	if pin.SHA256 != "0d0b1ca83c4872e5473f68926a894c7a8203b59b118e2a79bfe43dd76fbcbc1a" {
		t.Fatalf("pin sha256 %s is not the v1 schema of @agentclientprotocol/sdk 2.4.0", pin.SHA256)
	}
}

// TestSDK2_EveryDefHasAType: 178 defs, each with a Go type, and the 46
// x-method defs in the method table.
func TestSDK2_EveryDefHasAType(t *testing.T) {
	sf, err := loadSchema(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	m, err := buildModel(sf)
	if err != nil {
		t.Fatal(err)
	}
	if len(sf.order) != 178 {
		t.Fatalf("%d defs, want 178", len(sf.order))
	}
	for _, name := range sf.order {
		if m.defs[name] == nil || m.byName[m.defs[name].Name] != m.defs[name] {
			t.Errorf("def %s has no Go type", name)
		}
	}
	annotated := 0
	for _, me := range m.Methods {
		annotated++
		if !me.Notification {
			annotated++
		}
	}
	if annotated != 46 {
		t.Errorf("%d annotated defs in the method table, want 46", annotated)
	}
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
	pin, _ := json.Marshal(Pin{Package: "test", Version: "0", File: "schema/v1/schema.json", SHA256: hex.EncodeToString(sum[:])})
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
	if err := os.WriteFile(filepath.Join(root, "schema/pin.json"), []byte(`{"package":"p","version":"1","file":"schema/v1/schema.json","sha256":"`+strings.Repeat("0", 64)+`"}`), 0o644); err != nil {
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
	requiredMethods["agent"] = append(requiredMethods["agent"], "Teleport")
	defer func() { requiredMethods["agent"] = requiredMethods["agent"][:len(requiredMethods["agent"])-1] }()
	requireFail(t, repoRoot, "requiredMethods: agent method Teleport is not in the schema")
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
