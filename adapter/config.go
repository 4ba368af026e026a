package adapter

import (
	"fmt"
	"time"
)

// ExtensionKeyMCPConfig is the one key of the agent-client-protocol
// extension block (CFG-7): an operator MCP file the worker merges into the
// generated one. The adapter checks its type and keeps no value from it.
const ExtensionKeyMCPConfig = "mcp_config"

// CheckMCPConfigWrongType is the VAL-2 check id.
const CheckMCPConfigWrongType = KindName + "." + ExtensionKeyMCPConfig + ".wrong_type"

// SeverityError is the severity of a finding that stops the workflow.
const SeverityError = "error"

// DefaultReadTimeout is the read timeout when read_timeout_ms is not
// positive (CFG-5).
const DefaultReadTimeout = 30 * time.Second

// DefaultStopGrace is the stop grace when stop_grace_ms is not positive
// (CFG-6).
const DefaultStopGrace = 5 * time.Second

// Finding is one result of a validate-time check (VAL-2): the check id,
// its severity and the operator-facing message.
type Finding struct {
	ID       string
	Severity string
	Message  string
}

// ValidateExtension runs this kind's own validate-time check on the decoded
// agent-client-protocol block of WORKFLOW.md (VAL-1): mcp_config, when
// present, must be a string (VAL-2). It builds nothing and starts nothing;
// New reports the same findings with the same messages (VAL-3). Other keys,
// including any reasoning-effort or posture key, are not checked: this kind
// forwards none (CFG-8, VAL-4). A nil block has no findings.
func ValidateExtension(block map[string]any) []Finding {
	v, ok := block[ExtensionKeyMCPConfig]
	if !ok {
		return nil
	}
	if _, isString := v.(string); isString {
		return nil
	}
	return []Finding{{
		ID:       CheckMCPConfigWrongType,
		Severity: SeverityError,
		// The spec fixes only that the message names the key and the type
		// found.
		Message: fmt.Sprintf("%s.%s: expected a string, got %s", KindName, ExtensionKeyMCPConfig, yamlType(v)),
	}}
}

// yamlType names the YAML type a decoded value came from, in the words of
// the YAML core schema, so the message reads as the operator wrote the file.
func yamlType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return "int"
	case float32, float64:
		return "float"
	case time.Time:
		return "timestamp"
	case []any:
		return "sequence"
	case map[string]any, map[any]any:
		return "mapping"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// ReadTimeout resolves CFG-5: read_timeout_ms when positive, else
// DefaultReadTimeout.
func (c AgentConfig) ReadTimeout() time.Duration {
	if c.ReadTimeoutMS > 0 {
		return time.Duration(c.ReadTimeoutMS) * time.Millisecond
	}
	return DefaultReadTimeout
}

// StopGrace resolves CFG-6: stop_grace_ms when positive, else
// DefaultStopGrace.
func (c AgentConfig) StopGrace() time.Duration {
	if c.StopGraceMS > 0 {
		return time.Duration(c.StopGraceMS) * time.Millisecond
	}
	return DefaultStopGrace
}

// Registration is the metadata this kind registers with Sortie's agent
// registry (CFG-9). Sortie's shim copies it into its own registration.
type Registration struct {
	// Kind is the kind string (CFG-1).
	Kind string
	// RequiresCommand: there is no default command (CFG-2).
	RequiresCommand bool
	// MCPInjection is "translated": servers are re-expressed on the wire,
	// not handed over as a path flag (§4).
	MCPInjection string
	// UsageArrival and UsageAttribution say when token usage arrives and
	// how it is attributed, for a local launch.
	UsageArrival     string
	UsageAttribution string
	// RemoteUsageArrival and RemoteUsageAttribution are the session rule
	// for a launch over SSH: no usage (so Sortie's validate warns, CFG-10).
	RemoteUsageArrival     string
	RemoteUsageAttribution string
	// CredentialEnv names the credential variables the kind declares: none.
	CredentialEnv []string
	// ForwardsEffort is false: no reasoning-effort key is read (CFG-8).
	ForwardsEffort bool
}

// Registered returns this kind's registration metadata (CFG-9).
func Registered() Registration {
	return Registration{
		Kind:                   KindName,
		RequiresCommand:        true,
		MCPInjection:           "translated",
		UsageArrival:           "turn_end",
		UsageAttribution:       "per_model",
		RemoteUsageArrival:     "none",
		RemoteUsageAttribution: "none",
		CredentialEnv:          nil,
		ForwardsEffort:         false,
	}
}
