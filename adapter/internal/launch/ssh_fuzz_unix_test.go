//go:build unix

package launch

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// shellRuns bounds how many fuzz inputs per process go through /bin/sh;
// the rest check the pure property only, so fuzzing stays fast.
const shellRuns = 64

var shellRan atomic.Int64

// FuzzSSH1_RemoteCommandParsesBack renders the remote command and the
// stdin preamble (SSH-1, SSH-3) and checks that a POSIX shell reads them
// back to exactly the workspace and values given, leaving the protocol
// bytes after the preamble untouched, under sh and, when installed, bash
// (a common login shell, and what sshd runs the command with for root on
// Debian) in a UTF-8 locale. cd is replaced by a shell function
// that prints its arguments, so any workspace can be checked without
// creating it; the "agent command" prints the two variables and copies the
// rest of stdin.
func FuzzSSH1_RemoteCommandParsesBack(f *testing.F) {
	for _, seed := range [][3]string{
		{"/w", "v", "w"},
		{"/srv/a b/it's $HOME `id` \\ \"q\"", "with 'quotes' and \"double\" and spaces", "line1\nline2\n"},
		{"-leading-dash\nnewline\ttab", "\n\n", "trailing dot ."},
		{"'", "'", "''"},
		{"$(touch /tmp/pwned)", "$(id)", "${A%.}"},
		{"é ünï \xff\xfe", "\xff", "."},
		{"*", "?", "[a]"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	var shells []string
	for _, name := range []string{"sh", "bash"} {
		if p, err := exec.LookPath(name); err == nil {
			shells = append(shells, p)
		}
	}
	f.Fuzz(func(t *testing.T, workspace, a, b string) {
		if strings.ContainsRune(workspace+a+b, 0) {
			t.Skip("paths and environment values cannot hold NUL")
		}
		vars := []EnvVar{{"ACPKIT_A", a}, {"ACPKIT_B", b}}
		const agent = `printf 'A:%s\0B:%s\0REST:' "$ACPKIT_A" "$ACPKIT_B"; cat`
		cmd := RemoteCommand(workspace, agent, vars)

		// Pure: the command ends with the workspace word and the agent
		// command verbatim, the word unquotes to the workspace, and the
		// text holds no value.
		word, ok := strings.CutSuffix(cmd, " && "+agent)
		if !ok {
			t.Fatalf("agent command not appended verbatim: %q", cmd)
		}
		_, word, ok = strings.Cut(word, "cd -- ")
		if !ok || unquote(t, word) != workspace {
			t.Fatalf("workspace word %q does not unquote to %q", word, workspace)
		}
		if got, want := string(Preamble(vars)), a+b; got != want {
			t.Fatalf("preamble %q, want %q", got, want)
		}

		if shellRan.Add(1) > shellRuns {
			return
		}
		want := "cd:--\x00cd:" + workspace + "\x00A:" + a + "\x00B:" + b + "\x00REST:{\"jsonrpc\":\"2.0\"}\n"
		for _, sh := range shells {
			c := exec.Command(sh, "-c", `cd() { printf 'cd:%s\0' "$@"; }; `+cmd)
			c.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C.UTF-8"}
			c.Stdin = bytes.NewReader(append(Preamble(vars), "{\"jsonrpc\":\"2.0\"}\n"...))
			out, err := c.Output()
			if err != nil {
				t.Fatalf("%s: %v (%q)", sh, err, out)
			}
			if string(out) != want {
				t.Fatalf("%s read back\n%q\nwant\n%q", sh, out, want)
			}
		}
	})
}

// unquote reverses ShellQuote's form: single-quoted runs and \' between
// them, nothing else.
func unquote(t *testing.T, s string) string {
	t.Helper()
	var b strings.Builder
	for len(s) > 0 {
		switch {
		case s[0] == '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				t.Fatalf("unterminated quote in %q", s)
			}
			b.WriteString(s[1 : 1+end])
			s = s[2+end:]
		case strings.HasPrefix(s, `\'`):
			b.WriteByte('\'')
			s = s[2:]
		default:
			t.Fatalf("unquoted text %q", s)
		}
	}
	return b.String()
}
