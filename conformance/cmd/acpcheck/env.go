package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"acpkit.dev/conformance/check"
)

// agentEnv is the repeatable --agent-env flag: NAME=VALUE, or NAME to pass
// acpcheck's own value on.
type agentEnv []string

// String lists the variables set, never their values.
func (e *agentEnv) String() string { return strings.Join(e.masked(), " ") }

// Type names the flag's value in --help.
func (e *agentEnv) Type() string { return "NAME=VALUE" }

// Set records one --agent-env; the value is read when the flags are done.
func (e *agentEnv) Set(v string) error {
	name, _, _ := strings.Cut(v, "=")
	if name == "" || strings.ContainsAny(name, " \t\x00") {
		return errors.New("want NAME=VALUE or NAME")
	}
	*e = append(*e, v)
	return nil
}

// masked names each variable set, its value masked.
func (e *agentEnv) masked() []string {
	var out []string
	for _, v := range *e {
		name, _, _ := strings.Cut(v, "=")
		out = append(out, name+"="+check.Masked)
	}
	return out
}

// apply returns base with the variables set (a later setting of a name
// replaces an earlier one), and their values, which are secrets. A bare
// NAME takes its value from lookup and must be set there.
func (e *agentEnv) apply(base []string, lookup func(string) (string, bool)) (env, secrets []string, err error) {
	env = slices.Clone(base)
	for _, v := range *e {
		name, value, ok := strings.Cut(v, "=")
		if !ok {
			if value, ok = lookup(name); !ok {
				return nil, nil, fmt.Errorf("%s is not set in acpcheck's environment", name)
			}
		}
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
		env = append(env, name+"="+value)
		secrets = append(secrets, value)
	}
	return env, secrets, nil
}
