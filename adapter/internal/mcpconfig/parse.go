// Package mcpconfig parses the MCP configuration file Sortie's worker
// generates (.sortie/mcp.json, MCP-1) and renders its servers into the
// session/new wire shape (spec §4).
package mcpconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"acpkit.dev/adapter/internal/contract"
	"acpkit.dev/adapter/internal/fault"
	"acpkit.dev/internal/jsonkind"
)

// MaxFileBytes bounds the file read; a generated configuration is a few
// kilobytes.
const MaxFileBytes = 16 << 20

// Server is one enabled server of the configuration, as parsed.
type Server struct {
	// Name is the server's key under mcpServers.
	Name string
	// Type is the declared type ("stdio", "http", "sse",
	// "streamable-http"), or empty when the entry declares none.
	Type string
	// Command, Args and Env describe a stdio server (Command non-empty).
	Command string
	Args    []string
	Env     []Pair // sorted by name
	// URL and Headers describe a URL-addressed server (URL non-empty).
	URL     string
	Headers []Pair // sorted by name
}

// HTTP reports whether the server is URL-addressed (rendered as the HTTP
// variant whatever its declared type, MCP-8).
func (s Server) HTTP() bool { return s.URL != "" }

// Pair is a name and a value: an environment variable or an HTTP header.
type Pair struct {
	Name  string
	Value string
}

// ParseError is a configuration that breaks a parse rule (MCP-4). Path
// locates the offending member, e.g. mcpServers["tracker"].args[1].
type ParseError struct {
	Path   string
	Reason string
}

// Error renders "path: reason".
func (e *ParseError) Error() string {
	if e.Path == "" {
		return e.Reason
	}
	return e.Path + ": " + e.Reason
}

func perr(path, format string, args ...any) *ParseError {
	return &ParseError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// MessagePrefix starts the MCP-5 message: "parse MCP config: <parser error>".
const MessagePrefix = "parse MCP config: "

// Load returns the servers a session start delivers: none on a remote
// launch, whatever the path (MCP-2); none for an empty path (MCP-3);
// otherwise the parsed file. A read or parse failure is a *fault.Error of
// kind response_error with the MCP-5 message, wrapping the cause (a
// *ParseError, or the read error).
func Load(path string, remote bool) ([]Server, error) {
	if remote || path == "" {
		return nil, nil
	}
	data, err := readBounded(path)
	if err == nil {
		var servers []Server
		if servers, err = Parse(data); err == nil {
			return servers, nil
		}
	}
	return nil, fault.New(contract.KindResponseError, MessagePrefix+err.Error(), err)
}

// readBounded reads at most MaxFileBytes of path.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, perr("", "file is larger than %d bytes", MaxFileBytes)
	}
	return data, nil
}

// The keys an entry may carry (MCP-4).
const (
	keyType    = "type"
	keyCommand = "command"
	keyArgs    = "args"
	keyEnv     = "env"
	keyURL     = "url"
	keyHeaders = "headers"
	keyEnabled = "enabled"
)

// Parse applies the MCP-4 rules to a configuration document and returns
// its enabled servers sorted by name; an entry with "enabled": false is
// dropped (MCP-6). Duplicate keys anywhere are refused rather than
// resolved silently. Failures are *ParseError values.
//
// This runs once per session start, so it uses encoding/json's token
// decoder, which preserves member order and exposes duplicates.
func Parse(data []byte) ([]Server, error) {
	if err := json.Unmarshal(data, new(json.RawMessage)); err != nil {
		return nil, perr("", "invalid JSON: %v", err)
	}
	doc, err := members(data, "document")
	if err != nil {
		return nil, err
	}
	var servers []Server
	for _, m := range doc {
		if m.key != "mcpServers" {
			continue // other top-level members are not this parser's business
		}
		entries, err := members(m.raw, "mcpServers")
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			s, enabled, err := parseEntry(e.key, e.raw)
			if err != nil {
				return nil, err
			}
			if enabled {
				servers = append(servers, s)
			}
		}
	}
	slices.SortFunc(servers, func(a, b Server) int { return strings.Compare(a.Name, b.Name) })
	return servers, nil
}

// parseEntry parses mcpServers[name]; enabled is false when the entry says
// "enabled": false.
func parseEntry(name string, raw json.RawMessage) (s Server, enabled bool, err error) {
	path := fmt.Sprintf("mcpServers[%q]", name)
	if name == "" {
		return s, false, perr(path, "a server name must not be empty")
	}
	ms, err := members(raw, path)
	if err != nil {
		return s, false, err
	}
	s.Name, enabled = name, true
	has := map[string]bool{}
	for _, m := range ms {
		mpath := path + "." + m.key
		has[m.key] = true
		switch m.key {
		case keyType:
			err = decodeString(m.raw, mpath, &s.Type)
			if err == nil && !slices.Contains([]string{"stdio", "http", "sse", "streamable-http"}, s.Type) {
				err = perr(mpath, "unknown server type %q (want stdio, http, sse or streamable-http)", s.Type)
			}
		case keyCommand:
			err = decodeNonEmpty(m.raw, mpath, &s.Command)
		case keyURL:
			err = decodeNonEmpty(m.raw, mpath, &s.URL)
		case keyArgs:
			err = decodeStrings(m.raw, mpath, &s.Args)
		case keyEnv:
			s.Env, err = decodePairs(m.raw, mpath)
		case keyHeaders:
			s.Headers, err = decodePairs(m.raw, mpath)
		case keyEnabled:
			err = decodeBool(m.raw, mpath, &enabled)
		default:
			err = perr(path, "unknown key %q (want type, command, args, env, url, headers or enabled)", m.key)
		}
		if err != nil {
			return s, false, err
		}
	}
	switch {
	case has[keyCommand] && has[keyURL]:
		return s, false, perr(path, "has both command and url; exactly one is allowed")
	case !has[keyCommand] && !has[keyURL]:
		return s, false, perr(path, "has neither command nor url; exactly one is required")
	case s.Type == "stdio" && !has[keyCommand]:
		return s, false, perr(path, `type "stdio" needs command`)
	case s.Type != "" && s.Type != "stdio" && !has[keyURL]:
		return s, false, perr(path, "type %q needs url", s.Type)
	case has[keyURL] && (has[keyArgs] || has[keyEnv]):
		return s, false, perr(path, "args and env apply only to a command server")
	case has[keyCommand] && has[keyHeaders]:
		return s, false, perr(path, "headers apply only to a url server")
	}
	return s, enabled, nil
}

// member is one object member, in document order.
type member struct {
	key string
	raw json.RawMessage
}

// members decodes raw (already valid JSON) as an object, refusing null,
// other types and duplicate keys.
func members(raw json.RawMessage, path string) ([]member, error) {
	if got := jsonkind.Of(raw); got != "object" {
		if got == "null" {
			return nil, perr(path, "must not be null")
		}
		return nil, perr(path, "expected an object, got %s", got)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, perr(path, "%v", err)
	}
	var out []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, perr(path, "%v", err)
		}
		key, _ := tok.(string) // valid JSON: object keys are strings
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, perr(path, "%v", err)
		}
		if seen[key] {
			return nil, perr(path, "duplicate key %q", key)
		}
		seen[key] = true
		out = append(out, member{key, v})
	}
	return out, nil
}

func decodeString(raw json.RawMessage, path string, dst *string) error {
	if k := jsonkind.Of(raw); k != "string" {
		return perr(path, "expected a string, got %s", k)
	}
	return json.Unmarshal(raw, dst)
}

func decodeNonEmpty(raw json.RawMessage, path string, dst *string) error {
	if err := decodeString(raw, path, dst); err != nil {
		return err
	}
	if strings.TrimSpace(*dst) == "" {
		return perr(path, "must not be empty")
	}
	return nil
}

func decodeBool(raw json.RawMessage, path string, dst *bool) error {
	if k := jsonkind.Of(raw); k != "boolean" {
		return perr(path, "expected a boolean, got %s", k)
	}
	return json.Unmarshal(raw, dst)
}

func decodeStrings(raw json.RawMessage, path string, dst *[]string) error {
	if k := jsonkind.Of(raw); k != "array" {
		return perr(path, "expected an array of strings, got %s", k)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return perr(path, "%v", err)
	}
	out := make([]string, len(items))
	for i, it := range items {
		if err := decodeString(it, fmt.Sprintf("%s[%d]", path, i), &out[i]); err != nil {
			return err
		}
	}
	*dst = out
	return nil
}

// decodePairs decodes an object of string values, sorted by name.
func decodePairs(raw json.RawMessage, path string) ([]Pair, error) {
	ms, err := members(raw, path)
	if err != nil {
		return nil, err
	}
	out := make([]Pair, len(ms))
	for i, m := range ms {
		out[i].Name = m.key
		if err := decodeString(m.raw, fmt.Sprintf("%s[%q]", path, m.key), &out[i].Value); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b Pair) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
