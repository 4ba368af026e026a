package measure

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMS2_NamesRuntimeByProgramOrPackage(t *testing.T) {
	programs, packages := []string{"codex-acp"}, []string{"@agentclientprotocol/codex-acp"}
	for cmd, want := range map[string]bool{
		"codex-acp": true,
		"/opt/node_modules/.bin/codex-acp --flag":  true,
		`C:\tools\codex-acp.cmd`:                   true,
		"CODEX-ACP.EXE":                            true,
		"node /x/codex-acp.js":                     true,
		"npx @agentclientprotocol/codex-acp":       true,
		"npx @agentclientprotocol/codex-acp@2.6.0": true,
		"/usr/bin/env CODEX_HOME=/c codex-acp":     true,
		"codex":                                    false,
		"codex-acp-wrapper.sh":                     false,
		"npx @agentclientprotocol/codex-acpx":      false,
		"/srv/codex-acp/run-agent.sh":              false,
		"claude-agent-acp --codex-acp-like=flag":   false,
		"gemini --acp":                             false,
	} {
		tok := strings.Fields(cmd)
		assert.Equal(t, want, NamesRuntime(tok, programs, packages), cmd)
	}
	assert.True(t, NamesRuntime([]string{"run --with codex-acp"}, programs, packages), "an argument is split on white space")
}

func TestMS17_GetenvSeesTheCommandLinesEnvAssignments(t *testing.T) {
	t.Setenv("CODEX_HOME", "/inherited")
	t.Setenv("HOME", "/home/u")
	l := func(cmd string) Launch {
		tok := strings.Fields(cmd)
		return Launch{Program: tok[0], Args: tok[1:]}
	}
	for cmd, want := range map[string]string{
		"codex-acp":                     "/inherited",
		"env CODEX_HOME=/set codex-acp": "/set",
		"/usr/bin/env A=1 CODEX_HOME=/a CODEX_HOME=/b codex-acp": "/b",
		"env -u CODEX_HOME codex-acp":                            "",
		"env -uCODEX_HOME codex-acp":                             "",
		"env --unset=CODEX_HOME codex-acp":                       "",
		"env -u OTHER codex-acp":                                 "/inherited",
		"env -i PATH=/bin codex-acp":                             "",
		"env -i CODEX_HOME=/fresh codex-acp":                     "/fresh",
		"env codex-acp CODEX_HOME=/not-env-anymore":              "/inherited",
		"env -C /dir CODEX_HOME=/unknown-option codex-acp":       "/inherited",
		"sh -c CODEX_HOME=/x":                                    "/inherited",
	} {
		assert.Equal(t, want, l(cmd).Getenv("CODEX_HOME"), cmd)
	}
}

func TestMS17_PathIsTheVariableElseTheHomeFallback(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	assert.Equal(t, filepath.Join("/home/u", ".claude"), Launch{Program: "claude-agent-acp"}.Path("CLAUDE_CONFIG_DIR", ".claude"))
	t.Setenv("CLAUDE_CONFIG_DIR", "/etc/claude")
	assert.Equal(t, filepath.Clean("/etc/claude"), Launch{Program: "claude-agent-acp"}.Path("CLAUDE_CONFIG_DIR", ".claude"))
	rel := Launch{Program: "env", Args: []string{"CLAUDE_CONFIG_DIR=conf", "claude-agent-acp"}, Dir: "/work/space"}
	assert.Equal(t, filepath.Join("/work/space", "conf"), rel.Path("CLAUDE_CONFIG_DIR", ".claude"), "relative to the runtime's working directory")
	home := Launch{Program: "env", Args: []string{"HOME=/elsewhere", "CLAUDE_CONFIG_DIR=", "claude-agent-acp"}}
	assert.Equal(t, filepath.Join("/elsewhere", ".claude"), home.Path("CLAUDE_CONFIG_DIR", ".claude"), "the runtime's HOME, an empty variable unset")
}
