// Command gen generates the Go packages of every schema pinned in
// schema/pin.json (each schema's sha256 is checked): acpkit.dev/acpsdk/gen
// from the stable schema, and one opt-in package per other surface.
//
// Usage, from the repository root:
//
//	go run ./tools/gen                          # write every surface's package
//	go run ./tools/gen -only acpsdk/gen/v2      # write one surface's package
//	go run ./tools/gen -check                   # regenerate in memory; fail with a diff
//	go run ./tools/gen -schema F.json -pkg P -out DIR   # one schema's codec (golden tests)
//
// `make generate` runs it for every surface. The //go:generate line in each
// generated package's doc.go runs it too: acpsdk/gen's regenerates every
// surface, each other package's only itself (-only).
//
// The pipeline: load (load.go: go-jsonschema's model plus a raw pass for
// x-* keywords and member order), resolve into a model where every Go name
// and codec decision is made (model.go, resolve*.go), then emit: each
// emitter (emit*.go) prints the Go it produces, protogen style, and
// jennifer writes each file's header and import block (printer.go).
// Output is deterministic. README.md walks through adding a construct.
//
// # Rules for constructs that are not plain
//
// Every construct the generator meets is handled by one rule, the same for
// every schema, or stops generation with the schema path of what it does not
// handle (an unknown keyword, format or shape). The rules a schema bump has
// needed so far, one sentence each:
//
//   - A oneOf/anyOf is an enum only when at least one branch is a const; plain
//     branches of different JSON types without any const (v2's RequestId:
//     integer or string) are a union decided by the value's JSON kind.
//     Where: resolver.isEnum (resolve.go), resolver.shapeVariants
//     (resolve_union.go).
//   - A tagged union's variant for unknown tags is <Union>Unknown, or, when a
//     known tag already makes that name (v1 unstable's StateUpdate has the
//     tag "unknown"), <Union> plus the catch-all branch's title ("other").
//     Where: resolver.taggedVariants (resolve_union.go).
//   - The tag of a flattened union is the union's member even when its object
//     declares it too; such a declaration with x-deserialize-default-on-error
//     makes a tag that is not a string (null, malformed) select the branch that
//     declares the tag as null (v1 unstable's IdleStateUpdate "none"), which
//     keeps the member verbatim. Where: resolver.flatTagProperty and
//     flatTag.apply (resolve.go); the decoder's LenientTag branch in
//     emitter.taggedCodec (emit_union.go).
//   - A union def that is a tagged variant's payload (v2's SessionUpdate
//     "state_update" over StateUpdate) is flattened into the variant: its
//     tag and members sit beside the outer tag (and where it is also a
//     member's type, it is a whole object there); such a variant, like every
//     object whose members a flattened union shares, keeps non-canonical
//     input verbatim, snapshotted by the union that decodes the whole object.
//     Where: resolver.findFlattenedDefs (resolve.go), resolver.variantType
//     (resolve_union.go); variantKeepsVerbatim and decodeVariant
//     (emit_union.go).
//   - A def that only references another def (allOf of one $ref) is a Go type
//     alias of it (v1 unstable's InitializeProxyRequest = InitializeRequest).
//     Where: resolver.aliases and aliasTarget (resolve.go).
//   - A property whose value is a union of method payloads (an envelope's
//     params or result, every leaf a def with x-method) is raw JSON: the
//     envelope's method member decides its type, not the value. Where:
//     resolver.methodPayloads, called by resolver.ref (resolve_ref.go).
//   - A method result may be a union decided by shape (v1 unstable's
//     MessageMcpResponse); the typed call and handler then use its interface,
//     and the method table's NewResult is raw JSON (nothing decodes into an
//     interface). Where: resolver.methods (resolve_methods.go); resultType
//     (emit_api.go) and resultTarget (emit_methods.go).
//   - Every x-side names a side: beyond agent, client and protocol, each one
//     (v1 unstable's proxy) gets a Side constant, a peer, a handler interface
//     and a dispatcher. Where: resolver.methods and Model.extraSides
//     (resolve_methods.go); emitter.peer and emitter.handlers (emit_api.go).
//   - A string's pattern (upstream v2's Cost.currency, after the pinned
//     release) is checked on decode by a generated match<Name>, named after
//     the member or def it belongs to; a pattern no rule takes (on a
//     non-string, an enum's branch, a union's tag) stops generation, as do
//     one Go's regexp rejects and one without a plain sample string. Where:
//     resolver.pattern, namePatterns and checkConsumed (resolve_pattern.go),
//     called from resolver.typed (resolve_ref.go); emitter.decFunc and
//     emitter.patternChecks (emit_helpers.go).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	root := flag.String("root", ".", "repository root (holds schema/ and acpsdk/)")
	check := flag.Bool("check", false, "regenerate in memory and fail, with a diff, if a generated package differs")
	only := flag.String("only", "", "the one surface to generate (its package directory, e.g. acpsdk/gen/v2)")
	schema := flag.String("schema", "", "generate only the types and codec of this schema file (no pin), into -out as package -pkg")
	pkg := flag.String("pkg", "", "with -schema: the package name")
	out := flag.String("out", "", "with -schema: the output directory")
	flag.Parse()
	err := error(nil)
	if *schema != "" {
		err = runSchema(*schema, *pkg, *out, *check)
	} else {
		err = run(*root, *check, *only)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// errStale is what -check fails with.
var errStale = errors.New("generated code is stale; run make generate")

func run(root string, check bool, only string) error {
	surfaces, err := generateAll(root, only)
	if err != nil {
		return err
	}
	var diffs []string
	for _, s := range surfaces {
		dir := filepath.Join(root, filepath.FromSlash(s.surface.Go))
		if check {
			d, err := diff(dir, s.surface.Go, s.files)
			if err != nil {
				return err
			}
			diffs = append(diffs, d...)
			continue
		}
		if err := write(dir, s.files); err != nil {
			return err
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w:\n%s", errStale, strings.Join(diffs, ""))
	}
	return nil
}

// surfacePkg is one surface's package, file name to content.
type surfacePkg struct {
	surface *Surface
	files   map[string][]byte
}

// generateAll generates every pinned surface (or only the one whose
// package directory is only).
func generateAll(root, only string) ([]surfacePkg, error) {
	sfs, err := loadSchemas(root)
	if err != nil {
		return nil, err
	}
	// Every surface's model is built (the override table is checked
	// against all of them); only the selected ones are emitted.
	var models []*Model
	for _, sf := range sfs {
		m, err := buildModel(sf)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sf.surf.File, err)
		}
		models = append(models, m)
	}
	if err := checkOverrides(models); err != nil {
		return nil, err
	}
	var out []surfacePkg
	for _, m := range models {
		if only != "" && m.Surface.Go != only {
			continue
		}
		files, err := emit(m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Surface.File, err)
		}
		out = append(out, surfacePkg{m.Surface, files})
	}
	if only != "" && len(out) == 0 {
		return nil, fmt.Errorf("-only %s: no surface in schema/pin.json generates that package", only)
	}
	return out, nil
}

// write replaces the generated files of dir with files.
func write(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Remove generated files that are no longer produced.
	old, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	for _, p := range old {
		if _, ok := files[filepath.Base(p)]; !ok && isGenerated(p) {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// diff returns a unified diff per file of dir (shown as rel) whose content
// differs from want, including files that would be created, and generated
// files on disk that would no longer be produced.
func diff(dir, rel string, want map[string][]byte) ([]string, error) {
	var names []string
	for name := range want {
		names = append(names, name)
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	for _, p := range old {
		if _, ok := want[filepath.Base(p)]; !ok && isGenerated(p) {
			names = append(names, filepath.Base(p))
		}
	}
	sort.Strings(names)
	var out []string
	for _, name := range names {
		have, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if content, ok := want[name]; ok && err == nil && bytes.Equal(have, content) {
			continue
		}
		out = append(out, unifiedDiff(rel+"/"+name, have, want[name]))
	}
	return out, nil
}

func isGenerated(path string) bool {
	b, err := os.ReadFile(path)
	return err == nil && bytes.HasPrefix(b, []byte(headerPrefix))
}
