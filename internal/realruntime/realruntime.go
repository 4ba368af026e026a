//go:build linux

package realruntime

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"acpkit.dev/internal/fakemodel"
	"acpkit.dev/internal/npmtest"
)

// Runtime is one real runtime set up for a test.
type Runtime struct {
	// Kind is the runtime's name (its npm name without the scope).
	Kind Kind
	// Bin is the runtime's executable.
	Bin string
	// Env is what the runtime runs with beyond the inherited environment.
	Env []string
	// Home is the runtime's HOME.
	Home string
	// Mark is the value of the marker variable every process of the
	// runtime's tree inherits (see Survivors).
	Mark string
}

// markVar is inherited by every process of a runtime's tree, so the tree
// can be found after the fact.
const markVar = "ACPKIT_REALRT_MARK"

// Kind names one of the runtimes pinned in conformance/runtimes.
type Kind string

// The pinned runtimes.
const (
	ClaudeAgentACP Kind = "claude-agent-acp"
	CodexACP       Kind = "codex-acp"
)

// Kinds lists every pinned runtime, for tests that run each.
var Kinds = []Kind{ClaudeAgentACP, CodexACP}

// Start sets up the runtime kind against fake.
func Start(t testing.TB, kind Kind, fake *fakemodel.Server) Runtime {
	t.Helper()
	switch kind {
	case ClaudeAgentACP:
		return claude(t, fake)
	case CodexACP:
		return codex(t, fake)
	}
	t.Fatalf("realruntime: unknown runtime %q", kind)
	return Runtime{}
}

// WriteCall is the tool call that makes the runtime create path, which it
// asks permission for first: claude-agent-acp's Write tool, codex-acp's
// exec_command of touch outside its read-only sandbox.
func WriteCall(kind Kind, path string) *fakemodel.ToolCall {
	if kind == CodexACP {
		return &fakemodel.ToolCall{ID: "call_write_1", Name: "exec_command", Input: fmt.Sprintf(
			`{"cmd":%q,"sandbox_permissions":"require_escalated","justification":"Create the file?"}`, "touch "+path)}
	}
	return &fakemodel.ToolCall{ID: "toolu_write_1", Name: "Write", Input: fmt.Sprintf(`{"file_path":%q,"content":"made by the model\n"}`, path)}
}

// WriteScript asks for WriteCall in the agent's first request of a turn
// and answers the request carrying the tool's result with text; requests
// offering no tools (claude's session title) get a title.
func WriteScript(kind Kind, path string) fakemodel.Script {
	return func(r fakemodel.Request) fakemodel.Reply {
		switch {
		case !r.OffersTools():
			return fakemodel.Reply{Text: "Write a file"}
		case r.HasToolResult():
			return fakemodel.Reply{Text: "Understood, I did not write the file."}
		}
		return fakemodel.Reply{ToolCall: WriteCall(kind, path)}
	}
}

// claude sets up claude-agent-acp against fake (its Messages API). Its
// permission mode is "default", so it asks before writing a file.
func claude(t testing.TB, fake *fakemodel.Server) Runtime {
	t.Helper()
	r := setup(t, string(ClaudeAgentACP), fake)
	writeFile(t, filepath.Join(r.Home, ".claude", "settings.json"), `{"permissions":{"defaultMode":"default"}}`)
	r.Env = append(r.Env,
		// Named outright, so a developer's own setting cannot send it
		// elsewhere.
		"CLAUDE_CONFIG_DIR="+filepath.Join(r.Home, ".claude"),
		"ANTHROPIC_BASE_URL="+fake.URL,
		"ANTHROPIC_API_KEY=sk-ant-fake",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
	)
	if os.Geteuid() == 0 {
		// As root, session/new fails with bypass_root (-32603) unless it
		// is told it runs in a sandbox, even in the default mode.
		r.Env = append(r.Env, "IS_SANDBOX=1")
	}
	return r
}

// codex sets up codex-acp against fake (its Responses API). It logs in
// with an API key by itself and starts in read-only mode, so it asks before
// leaving its sandbox (a write, for one).
func codex(t testing.TB, fake *fakemodel.Server) Runtime {
	t.Helper()
	r := setup(t, string(CodexACP), fake)
	// gpt-5.5 is a model codex knows whose tools are plain functions
	// (exec_command), which a script can call without writing JavaScript.
	writeFile(t, filepath.Join(r.Home, ".codex", "config.toml"), fmt.Sprintf("openai_base_url = %q\nmodel = %q\n", fake.URL+"/v1", "gpt-5.5"))
	r.Env = append(r.Env,
		"CODEX_HOME="+filepath.Join(r.Home, ".codex"),
		"OPENAI_API_KEY=sk-fake",
		`DEFAULT_AUTH_REQUEST={"methodId":"api-key"}`,
		"INITIAL_AGENT_MODE=read-only",
	)
	return r
}

func setup(t testing.TB, name string, fake *fakemodel.Server) Runtime {
	t.Helper()
	bin := npmtest.Bin(t, name, name)
	home := t.TempDir()
	var mark [8]byte
	_, _ = rand.Read(mark[:])
	r := Runtime{Kind: Kind(name), Bin: bin, Home: home, Mark: hex.EncodeToString(mark[:])}
	r.Env = []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"HTTPS_PROXY=" + fake.URL, "https_proxy=" + fake.URL,
		"HTTP_PROXY=" + fake.URL, "http_proxy=" + fake.URL,
		"ALL_PROXY=" + fake.URL, "all_proxy=" + fake.URL,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		markVar + "=" + r.Mark,
	}
	return r
}

// Command is the runtime as one agent.command line: /usr/bin/env with the
// runtime's variables, then the runtime. No value contains a space, since
// the line is split on white space.
func (r Runtime) Command() string {
	return strings.Join(r.Argv(), " ")
}

// Argv is Command as an argument vector.
func (r Runtime) Argv() []string {
	return append(append([]string{"/usr/bin/env"}, r.Env...), r.Bin)
}

// Tapped is Command run through the wire tap of TapMain: the runtime's
// stdin is copied to file as well. exe is the test binary (os.Args[0]).
func (r Runtime) Tapped(exe, file string) string {
	argv := append(append([]string{"/usr/bin/env"}, r.Env...), tapVar+"="+file, exe, r.Bin)
	return strings.Join(argv, " ")
}

// Survivors returns the pids of live (not zombie) processes of the
// runtime's tree.
func (r Runtime) Survivors() []int {
	want := []byte(markVar + "=" + r.Mark + "\x00")
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, env...), append([]byte{0}, want...)) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && f[0] == "Z" {
				continue
			}
		}
		out = append(out, pid)
	}
	return out
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// CountMethod counts the lines of a tapped wire file that carry method.
func CountMethod(t testing.TB, file, method string) int {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("wire tap: %v", err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	needle := `"method":"` + method + `"`
	for sc.Scan() {
		if strings.Contains(sc.Text(), needle) {
			n++
		}
	}
	return n
}
