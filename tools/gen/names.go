package main

import (
	"strings"
	"unicode"
)

// initialisms are the words Go spells in capitals (the golint list, plus
// SSE which the schema uses for an MCP transport).
var initialisms = map[string]bool{
	"ACL": true, "API": true, "ASCII": true, "CPU": true, "CSS": true, "DNS": true,
	"EOF": true, "GUID": true, "HTML": true, "HTTP": true, "HTTPS": true, "ID": true,
	"IP": true, "JSON": true, "LHS": true, "QPS": true, "RAM": true, "RHS": true,
	"RPC": true, "SLA": true, "SMTP": true, "SQL": true, "SSE": true, "SSH": true,
	"TCP": true, "TLS": true, "TTL": true, "UDP": true, "UI": true, "UID": true,
	"UUID": true, "URI": true, "URL": true, "UTF8": true, "VM": true, "XML": true,
	"XMPP": true, "XSRF": true, "XSS": true,
}

// words splits a schema identifier (PascalCase, camelCase, snake_case,
// kebab-case, "fs/read_text_file", "Parse error") into words.
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && len(cur) > 0 && (unicode.IsLower(cur[len(cur)-1]) ||
			(i+1 < len(rs) && unicode.IsLower(rs[i+1]))):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// goName turns a schema identifier into an exported Go identifier with
// initialisms in capitals: SessionId → SessionID, mimeType → MimeType,
// end_turn → EndTurn, _meta → Meta.
func goName(s string) string {
	var b strings.Builder
	for _, w := range words(s) {
		if up := strings.ToUpper(w); initialisms[up] {
			b.WriteString(up)
			continue
		}
		rs := []rune(strings.ToLower(w))
		rs[0] = unicode.ToUpper(rs[0])
		b.WriteString(string(rs))
	}
	return b.String()
}

// commonWordPrefix and commonWordSuffix find the shared leading and
// trailing words of Go names (ElicitationSessionScope, ElicitationRequestScope
// → "Elicitation", "Scope"); they name an anonymous union from its variants.
func commonWordPrefix(names []string) string {
	ws := make([][]string, len(names))
	for i, n := range names {
		ws[i] = words(n)
	}
	var out []string
	for i := 0; ; i++ {
		for _, w := range ws {
			if i >= len(w)-1 || w[i] != ws[0][i] {
				return strings.Join(out, "")
			}
		}
		out = append(out, ws[0][i])
	}
}

func commonWordSuffix(names []string) string {
	ws := make([][]string, len(names))
	for i, n := range names {
		ws[i] = words(n)
	}
	var out []string
	for i := 1; ; i++ {
		for _, w := range ws {
			if i >= len(w) || w[len(w)-i] != ws[0][len(ws[0])-i] {
				return strings.Join(out, "")
			}
		}
		out = append([]string{ws[0][len(ws[0])-i]}, out...)
	}
}
