//go:build linux

package realruntime

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"acpkit.dev/internal/fakemodel"
)

// Kind names one of the runtimes pinned in conformance/runtimes: the
// directory its lock file is in (its npm name without the scope).
type Kind string

// The pinned runtimes.
const (
	ClaudeAgentACP Kind = "claude-agent-acp"
	CodexACP       Kind = "codex-acp"
	GeminiCLI      Kind = "gemini-cli"
	Copilot        Kind = "copilot"
	OpenCode       Kind = "opencode-ai"
	QwenCode       Kind = "qwen-code"
	Cline          Kind = "cline"
)

// Refusal is what a runtime does once the permission it asked for was
// refused, as measured on its pinned version.
type Refusal string

const (
	// CarriesOn: it tells the model the tool was refused and the turn
	// goes on to end_turn (claude-agent-acp, Cline).
	CarriesOn Refusal = "carries on"
	// StopsAtRefusal: it answers end_turn right after the refusal, with
	// no further model call, having sent only the refused tool call's
	// failure and the session's state (OpenCode, Qwen Code), so DI-11's
	// facts say it stopped there.
	StopsAtRefusal Refusal = "stops at the refusal"
	// StopsSaying: like StopsAtRefusal, no further model call, but first
	// a message of its own, "Info: Operation cancelled by user", which
	// DI-11 cannot tell from a model's answer (Copilot CLI).
	StopsSaying Refusal = "stops at the refusal, saying so"
	// Cancels: it answers stopReason cancelled, which DI-10 reports as
	// input required, with nothing sent after the refusal (codex-acp).
	Cancels Refusal = "cancels the turn"
)

// Spec is one runtime of the suite: how it is installed, put in ACP mode
// and set up offline, and what it does where runtimes differ. A runtime
// is one entry of Specs; a scenario it cannot do is a line of its
// scenarios.baseline, not a branch in a test.
type Spec struct {
	Kind Kind
	// Package is the npm package pinned in
	// conformance/runtimes/<Kind>/package.json.
	Package string
	// Bin is the executable in node_modules/.bin; Args put it in ACP mode.
	Bin  string
	Args []string
	// API is the fakemodel API it calls.
	API string
	// AfterRefusal is what it does once a permission was refused.
	AfterRefusal Refusal
	// ExitsOnStdinEOF is false for runtimes that keep running when their
	// stdin closes (SIGTERM ends them).
	ExitsOnStdinEOF bool
	// write makes the model ask for a file at path to be created, which
	// the runtime asks permission for; command makes it run a shell
	// command, which the runtime's settings (setup) let it run without
	// asking, or, where it has no per-command setting, the extra
	// arguments unasked (see CommandsUnasked).
	write   func(path string) *fakemodel.ToolCall
	command func(cmd string) *fakemodel.ToolCall
	unasked []string
	// setup writes the runtime's settings under r.Home and adds its
	// variables to r.Env.
	setup func(t testing.TB, r *Runtime, fake *fakemodel.Server)
}

// Specs is every pinned runtime, in the order the suite runs them.
var Specs = []Spec{
	{
		Kind: ClaudeAgentACP, Package: "@agentclientprotocol/claude-agent-acp", Bin: "claude-agent-acp",
		API: "anthropic", AfterRefusal: CarriesOn, ExitsOnStdinEOF: true,
		write: func(path string) *fakemodel.ToolCall {
			return call("toolu_write_1", "Write", map[string]any{"file_path": path, "content": "made by the model\n"})
		},
		command: func(cmd string) *fakemodel.ToolCall {
			return call("toolu_bash_1", "Bash", map[string]any{"command": cmd, "description": "Read the fifo"})
		},
		setup: setupClaude,
	},
	{
		Kind: CodexACP, Package: "@agentclientprotocol/codex-acp", Bin: "codex-acp",
		API: "openai", AfterRefusal: Cancels, ExitsOnStdinEOF: true,
		// A touch outside the read-only sandbox, asked for with
		// escalation: codex asks before running it.
		write: func(path string) *fakemodel.ToolCall {
			return call("call_write_1", "exec_command", map[string]any{
				"cmd": "touch " + path, "sandbox_permissions": "require_escalated", "justification": "Create the file?"})
		},
		// Inside the sandbox (it only reads): run without asking.
		command: func(cmd string) *fakemodel.ToolCall {
			return call("call_cmd_1", "exec_command", map[string]any{"cmd": cmd})
		},
		setup: setupCodex,
	},
	{
		Kind: GeminiCLI, Package: "@google/gemini-cli", Bin: "gemini", Args: []string{"--acp"},
		API: "gemini", AfterRefusal: CarriesOn, ExitsOnStdinEOF: true,
		write: func(path string) *fakemodel.ToolCall {
			return call("write_file", "write_file", map[string]any{"file_path": path, "content": "made by the model\n"})
		},
		command: func(cmd string) *fakemodel.ToolCall {
			return call("run_shell_command", "run_shell_command", map[string]any{"command": cmd, "description": "Read the fifo"})
		},
		setup: setupGemini,
	},
	{
		Kind: Copilot, Package: "@github/copilot", Bin: "copilot",
		// --allow-tool lets cat run unasked; every other tool asks.
		Args: []string{"--acp", "--no-auto-update", "--allow-tool=shell(cat:*)"},
		API:  "chat", AfterRefusal: StopsSaying,
		write: func(path string) *fakemodel.ToolCall {
			return call("call_create_1", "create", map[string]any{"path": path, "file_text": "made by the model\n"})
		},
		command: func(cmd string) *fakemodel.ToolCall {
			return call("call_bash_1", "bash", map[string]any{"command": cmd, "description": "Read the fifo"})
		},
		setup: setupCopilot,
	},
	{
		Kind: OpenCode, Package: "opencode-ai", Bin: "opencode", Args: []string{"acp"},
		API: "chat", AfterRefusal: StopsAtRefusal,
		write: func(path string) *fakemodel.ToolCall {
			return call("call_write_1", "write", map[string]any{"filePath": path, "content": "made by the model\n"})
		},
		command: func(cmd string) *fakemodel.ToolCall {
			return call("call_bash_1", "bash", map[string]any{"command": cmd, "description": "Read the fifo"})
		},
		setup: setupOpenCode,
	},
	{
		Kind: QwenCode, Package: "@qwen-code/qwen-code", Bin: "qwen",
		// Its ACP default, auto, lets a model classifier decide.
		Args: []string{"--acp", "--approval-mode", "default"},
		API:  "chat", AfterRefusal: StopsAtRefusal,
		write: func(path string) *fakemodel.ToolCall {
			return call("call_write_1", "write_file", map[string]any{"file_path": path, "content": "made by the model\n"})
		},
		command: func(cmd string) *fakemodel.ToolCall {
			return call("call_shell_1", "run_shell_command", map[string]any{"command": cmd, "description": "Read the fifo"})
		},
		setup: setupQwen,
	},
	{
		Kind: Cline, Package: "cline", Bin: "cline", Args: []string{"--acp"},
		API: "chat", AfterRefusal: CarriesOn, ExitsOnStdinEOF: true,
		write: func(path string) *fakemodel.ToolCall {
			return call("call_patch_1", "apply_patch", map[string]any{
				"input": "*** Begin Patch\n*** Add File: " + path + "\n+made by the model\n*** End Patch"})
		},
		command: func(cmd string) *fakemodel.ToolCall {
			return call("call_cmd_1", "run_commands", map[string]any{"commands": []string{cmd}})
		},
		// In ACP mode it asks before every command and has no setting for
		// one; --auto-approve approves every tool.
		unasked: []string{"--auto-approve", "true"},
		setup:   setupCline,
	},
}

// SpecOf returns kind's entry of Specs.
func SpecOf(kind Kind) (Spec, bool) {
	for _, s := range Specs {
		if s.Kind == kind {
			return s, true
		}
	}
	return Spec{}, false
}

// WriteCall is the tool call that makes the runtime ask permission to
// create the file at path (what Script answers PromptWrite with), for a
// script of the test's own: acpcheck's grading, for one.
func (s Spec) WriteCall(path string) *fakemodel.ToolCall { return s.write(path) }

// call is a tool call whose input is args as JSON.
func call(id, name string, args map[string]any) *fakemodel.ToolCall {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err) // the tables above hold only strings
	}
	return &fakemodel.ToolCall{ID: id, Name: name, Input: string(b)}
}

// setupClaude points claude-agent-acp at the fake's Messages API. Its
// permission mode is "default", so it asks before writing a file; cat is
// allowed outright.
func setupClaude(t testing.TB, r *Runtime, fake *fakemodel.Server) {
	writeJSON(t, filepath.Join(r.Home, ".claude", "settings.json"), map[string]any{
		"permissions": map[string]any{"defaultMode": "default", "allow": []string{"Bash(cat:*)"}},
	})
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
}

// setupCodex points codex-acp at the fake's Responses API. It logs in
// with an API key by itself and starts in read-only mode, so it asks
// before leaving its sandbox (a write, for one).
func setupCodex(t testing.TB, r *Runtime, fake *fakemodel.Server) {
	// gpt-5.5 is a model codex knows whose tools are plain functions
	// (exec_command), which a script can call without writing JavaScript.
	writeFile(t, filepath.Join(r.Home, ".codex", "config.toml"), fmt.Sprintf("openai_base_url = %q\nmodel = %q\n", fake.URL+"/v1", "gpt-5.5"))
	r.Env = append(r.Env,
		"CODEX_HOME="+filepath.Join(r.Home, ".codex"),
		"OPENAI_API_KEY=sk-fake",
		`DEFAULT_AUTH_REQUEST={"methodId":"api-key"}`,
		"INITIAL_AGENT_MODE=read-only",
	)
}

// setupGemini points Gemini CLI at the fake's Gemini API. Its approval
// mode is the default, so it asks before writing; cat is allowed. It runs
// without relaunching itself: the relaunch only raises node's heap limit,
// and its second node process nearly doubles the CPU of every start (6.2
// against 3.7 CPU-seconds to a session, measured), which the suite pays
// some forty times.
func setupGemini(t testing.TB, r *Runtime, fake *fakemodel.Server) {
	writeJSON(t, filepath.Join(r.Home, ".gemini", "settings.json"), map[string]any{
		"tools": map[string]any{"allowed": []string{"run_shell_command(cat)"}},
	})
	r.Env = append(r.Env,
		"GEMINI_CLI_HOME="+r.Home,
		"GEMINI_CLI_NO_RELAUNCH=true",
		"GOOGLE_GEMINI_BASE_URL="+fake.URL,
		"GEMINI_API_KEY=fake-key",
	)
}

// setupCopilot points Copilot CLI at the fake's chat completions as its
// own provider (BYOK), offline, with the shared unpack cache.
func setupCopilot(t testing.TB, r *Runtime, fake *fakemodel.Server) {
	r.Env = append(r.Env,
		"COPILOT_CACHE_HOME="+copilotCache(t, r.Path),
		"COPILOT_OFFLINE=true",
		"COPILOT_PROVIDER_BASE_URL="+fake.URL+"/v1",
		"COPILOT_PROVIDER_TYPE=openai",
		"COPILOT_PROVIDER_API_KEY=sk-fake",
		"COPILOT_MODEL="+fakemodel.ChatModel,
	)
}

// setupOpenCode gives OpenCode one provider, the fake's chat completions
// through the @ai-sdk/openai-compatible package it bundles, and makes it
// ask before editing and before any command but cat (its defaults allow
// both).
func setupOpenCode(t testing.TB, r *Runtime, fake *fakemodel.Server) {
	writeJSON(t, filepath.Join(r.Home, ".config", "opencode", "opencode.json"), map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"model":   "fake/" + fakemodel.ChatModel,
		"provider": map[string]any{"fake": map[string]any{
			"npm":     "@ai-sdk/openai-compatible",
			"name":    "Fake",
			"options": map[string]any{"baseURL": fake.URL + "/v1", "apiKey": "sk-fake"},
			"models":  map[string]any{fakemodel.ChatModel: map[string]any{"name": "Fake"}},
		}},
		"permission": map[string]any{"edit": "ask", "bash": map[string]any{"*": "ask", "cat *": "allow"}},
		// Its git snapshot of the workspace at each session's start and step
		// serves undo, which no test uses: 1.5 CPU-seconds fewer per launch.
		"snapshot": false,
	})
	r.Env = append(r.Env,
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
		"OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_CLAUDE_CODE=1",
		"OPENCODE_DISABLE_EXTERNAL_SKILLS=1",
	)
}

// QwenMemoryExtraction is in the system prompt of the model call Qwen
// Code's managed auto-memory makes after a turn, which setupQwen turns off.
const QwenMemoryExtraction = "managed memory extraction subagent"

// setupQwen points Qwen Code at the fake's chat completions through its
// OpenAI variables; cat is allowed, everything else asks. Like Gemini CLI
// it runs without relaunching itself (the relaunch adds --expose-gc for a
// memory-pressure monitor): 7.3 against 4.6 CPU-seconds to a session.
func setupQwen(t testing.TB, r *Runtime, fake *fakemodel.Server) {
	writeJSON(t, filepath.Join(r.Home, ".qwen", "settings.json"), map[string]any{
		"permissions": map[string]any{"allow": []string{"Bash(cat *)"}},
		// Its managed auto-memory runs a subagent, a model call of its own,
		// after every turn (and costs about half a turn's CPU); its usage
		// statistics are tunnels the fake refuses. Neither is what a test
		// drives.
		"memory":  map[string]any{"enableManagedAutoMemory": false, "enableManagedAutoDream": false},
		"privacy": map[string]any{"usageStatisticsEnabled": false},
	})
	r.Env = append(r.Env,
		"OPENAI_API_KEY=sk-fake",
		"OPENAI_BASE_URL="+fake.URL+"/v1",
		"OPENAI_MODEL="+fakemodel.ChatModel,
		"QWEN_CODE_NO_RELAUNCH=true",
	)
}

// setupCline writes the provider settings `cline auth -p openai-compatible
// -k KEY -m MODEL -b URL` writes (the command itself takes seconds of CPU
// per test) and runs the local session backend: the default one starts a
// detached hub daemon that outlives every session.
func setupCline(t testing.TB, r *Runtime, fake *fakemodel.Server) {
	writeJSON(t, filepath.Join(r.Home, ".cline", "data", "settings", "providers.json"), map[string]any{
		"version":          1,
		"lastUsedProvider": "openai-compatible",
		"modes":            map[string]any{},
		"providers": map[string]any{"openai-compatible": map[string]any{
			"settings": map[string]any{
				"provider": "openai-compatible",
				"apiKey":   "sk-fake",
				"model":    fakemodel.ChatModel,
				"baseUrl":  fake.URL + "/v1",
			},
			// Without it the entry is ignored and cline calls its default
			// model through its default host.
			"updatedAt":   "2026-01-01T00:00:00.000Z",
			"tokenSource": "manual",
		}},
	})
	r.Env = append(r.Env,
		"CLINE_API_KEY=sk-fake",
		"CLINE_PROVIDER=openai-compatible",
		clineLocalBackend,
	)
}

// clineLocalBackend makes Cline keep its sessions in its own process.
const clineLocalBackend = "CLINE_SESSION_BACKEND_MODE=local"

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(b))
}
