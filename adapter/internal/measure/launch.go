package measure

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// NamesRuntime is the claim rule of MS-2 for a runtime known by its
// executable names and npm packages: some token of the command line (each
// argument split on white space) is, less its directory and one script or
// executable suffix, one of programs, or names one of packages, bare or at
// a version (`@scope/name@1.2.3`).
func NamesRuntime(tokens []string, programs, packages []string) bool {
	for _, tok := range tokens {
		for _, t := range strings.Fields(tok) {
			for _, p := range packages {
				if t == p || strings.HasPrefix(t, p+"@") {
					return true
				}
			}
			base := strings.ToLower(t[strings.LastIndexAny(t, `/\`)+1:])
			for _, ext := range []string{".exe", ".cmd", ".bat", ".ps1", ".js", ".mjs", ".cjs"} {
				if strings.HasSuffix(base, ext) {
					base = strings.TrimSuffix(base, ext)
					break
				}
			}
			for _, p := range programs {
				if base == p {
					return true
				}
			}
		}
	}
	return false
}

// Argv is the command line, program first.
func (l Launch) Argv() []string { return append([]string{l.Program}, l.Args...) }

// Getenv is the value name has in the environment the launched runtime
// starts with, as far as the command line shows it: the adapter's own
// environment, which the runtime inherits (SP-1), changed by a leading
// env(1) — its NAME=value assignments, -u NAME and -i. A source that reads
// where the runtime writes (MS-17) looks there, not in the adapter's
// environment alone, so `env CODEX_HOME=/srv/codex codex-acp` is measured
// where codex writes. What a wrapper script sets is not visible.
func (l Launch) Getenv(name string) string {
	v, _ := l.lookupEnv(name)
	return v
}

// lookupEnv walks the leading env(1) of the command line.
func (l Launch) lookupEnv(name string) (string, bool) {
	v, ok := os.LookupEnv(name)
	argv := l.Argv()
	if l.Program == "" || strings.TrimSuffix(filepath.Base(argv[0]), ".exe") != "env" {
		return v, ok
	}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-i" || a == "--ignore-environment" || a == "-":
			v, ok = "", false
		case a == "-u" || a == "--unset":
			if i+1 < len(argv) && argv[i+1] == name {
				v, ok = "", false
			}
			i++
		case strings.HasPrefix(a, "--unset="):
			if strings.TrimPrefix(a, "--unset=") == name {
				v, ok = "", false
			}
		case strings.HasPrefix(a, "-u") && !strings.HasPrefix(a, "--"):
			if a[2:] == name {
				v, ok = "", false
			}
		case strings.HasPrefix(a, "-"):
			// Another option of env: the environment so far is what
			// this line shows.
			return v, ok
		case strings.Contains(a, "="):
			if k, val, _ := strings.Cut(a, "="); k == name {
				v, ok = val, true
			}
		default:
			return v, ok // the program env runs
		}
	}
	return v, ok
}

// Home is the launched runtime's home directory: HOME as Getenv sees it,
// else the user's home from the account database (where a Node.js or Rust
// runtime without HOME looks too).
func (l Launch) Home() string {
	if h := l.Getenv("HOME"); h != "" {
		return h
	}
	if u, err := user.Current(); err == nil {
		return u.HomeDir
	}
	return ""
}

// Path is a directory a runtime reads from a variable: the variable's value
// as Getenv sees it, resolved against the runtime's working directory when
// relative, else home joined with fallback. "" when neither is known.
func (l Launch) Path(variable string, fallback ...string) string {
	if v := l.Getenv(variable); v != "" {
		if !filepath.IsAbs(v) && l.Dir != "" {
			v = filepath.Join(l.Dir, v)
		}
		return filepath.Clean(v)
	}
	home := l.Home()
	if home == "" {
		return ""
	}
	return filepath.Join(append([]string{home}, fallback...)...)
}
