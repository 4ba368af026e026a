// Package modzip cuts a module release in the layout of a Go module proxy
// (the GOPROXY protocol's @v/list, .info, .mod and .zip files) and computes
// the go.sum hashes the go command checks against it, with the standard
// library only: the zip is "module@version/" plus each file's path, and a
// hash is the go command's "h1:" dirhash (SHA-256 over the sorted
// "sha256  name" lines of the files).
package modzip

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Module is one module directory about to be released.
type Module struct {
	// Path is the module path from go.mod.
	Path string
	// Dir is the module's directory.
	Dir string
	// Files are the slash-separated paths, relative to Dir, the release
	// carries: nested modules are left out.
	Files []string
	// GoMod is go.mod's content.
	GoMod []byte
	// Requires maps each required module path to its version.
	Requires map[string]string
	// extraSum is appended to the module's go.sum in the release.
	extraSum []string
}

// Release is one module written to a proxy directory.
type Release struct {
	Path, Version string
	// ZipHash and ModHash are the go.sum hashes of the zip and the go.mod.
	ZipHash, ModHash string
}

// SumLines are the two go.sum lines a requirement of r adds.
func (r Release) SumLines() []string {
	return []string{
		fmt.Sprintf("%s %s %s", r.Path, r.Version, r.ZipHash),
		fmt.Sprintf("%s %s/go.mod %s", r.Path, r.Version, r.ModHash),
	}
}

// Read loads the module in dir; files are its candidate files (relative,
// slash-separated), of which those under a directory holding another
// go.mod are dropped.
func Read(dir string, files []string) (*Module, error) {
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("modzip: %w", err)
	}
	modPath, reqs, err := parseGoMod(gomod)
	if err != nil {
		return nil, fmt.Errorf("modzip: %s: %w", filepath.Join(dir, "go.mod"), err)
	}
	nested := map[string]bool{}
	for _, f := range files {
		if d := path.Dir(f); path.Base(f) == "go.mod" && d != "." {
			nested[d] = true
		}
	}
	m := &Module{Path: modPath, Dir: dir, GoMod: gomod, Requires: reqs}
	for _, f := range files {
		if !inNested(f, nested) {
			m.Files = append(m.Files, f)
		}
	}
	slices.Sort(m.Files)
	return m, nil
}

// inNested reports whether f lies under one of the nested module roots.
func inNested(f string, nested map[string]bool) bool {
	for d := path.Dir(f); d != "."; d = path.Dir(d) {
		if nested[d] {
			return true
		}
	}
	return false
}

// AddSums records in the release's go.sum the hashes of every earlier
// release this module requires at exactly that version, as `go get` does.
func (m *Module) AddSums(version string, released []Release) {
	for _, r := range released {
		if m.Requires[r.Path] == r.Version && r.Version == version {
			m.extraSum = append(m.extraSum, r.SumLines()...)
		}
	}
}

// content returns a release file's bytes: go.sum gains the extra lines.
func (m *Module) content(f string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(m.Dir, filepath.FromSlash(f)))
	if errors.Is(err, os.ErrNotExist) && f == "go.sum" {
		b, err = nil, nil
	}
	if err != nil || f != "go.sum" || len(m.extraSum) == 0 {
		return b, err
	}
	have := map[string]bool{}
	for l := range strings.SplitSeq(string(b), "\n") {
		have[l] = true
	}
	var out bytes.Buffer
	out.Write(b)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		out.WriteByte('\n')
	}
	for _, l := range m.extraSum {
		if !have[l] {
			out.WriteString(l + "\n")
		}
	}
	return out.Bytes(), nil
}

// WriteProxy writes m at version into the proxy directory out and returns
// the release with its hashes.
func (m *Module) WriteProxy(out, version string) (Release, error) {
	escaped, err := escapePath(m.Path)
	if err != nil {
		return Release{}, err
	}
	dir := filepath.Join(out, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Release{}, fmt.Errorf("modzip: %w", err)
	}
	files := m.Files
	if len(m.extraSum) > 0 && !slices.Contains(files, "go.sum") {
		files = append(slices.Clone(files), "go.sum")
		slices.Sort(files)
	}
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	prefix := m.Path + "@" + version + "/"
	var named []namedFile
	for _, f := range files {
		b, err := m.content(f)
		if err != nil {
			return Release{}, fmt.Errorf("modzip: %w", err)
		}
		w, err := zw.Create(prefix + f)
		if err != nil {
			return Release{}, fmt.Errorf("modzip: %w", err)
		}
		if _, err := w.Write(b); err != nil {
			return Release{}, fmt.Errorf("modzip: %w", err)
		}
		named = append(named, namedFile{prefix + f, b})
	}
	if err := zw.Close(); err != nil {
		return Release{}, fmt.Errorf("modzip: %w", err)
	}
	info, err := json.Marshal(struct{ Version, Time string }{version, time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		return Release{}, fmt.Errorf("modzip: %w", err)
	}
	for name, b := range map[string][]byte{version + ".zip": zbuf.Bytes(), version + ".mod": m.GoMod, version + ".info": info} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return Release{}, fmt.Errorf("modzip: %w", err)
		}
	}
	if err := addToList(filepath.Join(dir, "list"), version); err != nil {
		return Release{}, err
	}
	return Release{
		Path:    m.Path,
		Version: version,
		ZipHash: hash1(named),
		ModHash: hash1([]namedFile{{"go.mod", m.GoMod}}),
	}, nil
}

// addToList appends version to the proxy's version list once.
func addToList(list, version string) error {
	b, err := os.ReadFile(list)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("modzip: %w", err)
	}
	if slices.Contains(strings.Fields(string(b)), version) {
		return nil
	}
	f, err := os.OpenFile(list, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("modzip: %w", err)
	}
	_, err = fmt.Fprintln(f, version)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("modzip: %w", err)
	}
	return nil
}

// namedFile is one file a hash covers, under the name the hash uses.
type namedFile struct {
	name string
	data []byte
}

// hash1 is the go command's "h1:" hash of files.
func hash1(files []namedFile) string {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b namedFile) int { return strings.Compare(a.name, b.name) })
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%x  %s\n", sha256.Sum256(f.data), f.name)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// escapePath is the proxy protocol's case encoding: each upper-case letter
// becomes '!' and its lower case.
func escapePath(p string) (string, error) {
	var b strings.Builder
	for _, r := range p {
		switch {
		case r == '!' || r >= unicode.MaxASCII:
			return "", fmt.Errorf("modzip: module path %q: unsupported character %q", p, r)
		case unicode.IsUpper(r):
			b.WriteByte('!')
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), nil
}

// parseGoMod reads the module path and the require directives of a go.mod,
// the part of its grammar a release needs: `require path version` lines and
// `require ( … )` blocks, with // comments.
func parseGoMod(b []byte) (string, map[string]string, error) {
	var modPath string
	reqs := map[string]string{}
	inBlock := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case inBlock != "" && f[0] == ")":
			inBlock = ""
		case inBlock == "require" && len(f) >= 2:
			reqs[unquote(f[0])] = f[1]
		case inBlock != "":
		case len(f) == 2 && f[1] == "(":
			inBlock = f[0]
		case f[0] == "module" && len(f) == 2:
			modPath = unquote(f[1])
		case f[0] == "require" && len(f) >= 3:
			reqs[unquote(f[1])] = f[2]
		}
	}
	if modPath == "" {
		return "", nil, errors.New("no module directive")
	}
	return modPath, reqs, sc.Err()
}

func unquote(s string) string { return strings.Trim(s, "\"`") }
