#!/usr/bin/env bash
# release-check: cut the release the go.mod files name (docs/RELEASING.md)
# from this work tree into a local file:// module proxy, then, from a
# scratch module outside the repository, with an empty module cache and no
# network (the proxy list has no https and no "direct"; GOSUMDB and VCS are
# off), `go install` acprun, acpcheck and refagent at that version, run them,
# and `go get` the SDK. Third-party modules come from the machine's module
# cache, read as a second file:// proxy.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# The release version: what the adapter requires of the root module. Every
# other place that names it must agree.
version=$(awk '$1 == "acpkit.dev" && $2 ~ /^v/ { print $2; exit }' adapter/go.mod)
[ -n "$version" ] || { echo "release-check: adapter/go.mod does not require acpkit.dev" >&2; exit 1; }
for want in "tools/bench/go.mod:acpkit.dev $version" "tools/bench/go.mod:acpkit.dev/adapter $version" \
            "go.work:acpkit.dev $version => ./" "go.work:acpkit.dev/adapter $version => ./adapter"; do
  file=${want%%:*}
  grep -qF -- "${want#*:}" "$file" || { echo "release-check: $file does not name ${want#*:}" >&2; exit 1; }
done
if grep -n '^replace\|^	*[^ ]* => ' go.mod adapter/go.mod tools/*/go.mod; then
  echo "release-check: a go.mod has a replace directive; go install pkg@version refuses such a module (use go.work)" >&2
  exit 1
fi

cache=$(go env GOMODCACHE)
work=$(mktemp -d "${TMPDIR:-/tmp}/acpkit-release-check.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

go run ./tools/release/cmd/modproxy -out "$work/proxy" -version "$version" . adapter

export GOWORK=off GOTOOLCHAIN=local GOSUMDB=off GOVCS='*:off' GONOSUMDB= GOPRIVATE= GONOPROXY=
export GOPROXY="file://$work/proxy,file://$cache/cache/download"
export GOPATH="$work/gopath" GOMODCACHE="$work/gopath/pkg/mod" GOBIN="$work/bin"
# No -trimpath, as the README installs them: the standard library then
# comes from the build cache the other builds filled (make test: the
# generator's and staticcheck's), where -trimpath compiled all of it again:
# after make test's first stage the check took 74 CPU-seconds with it, 32
# without. The module cache is new each run, so the modules themselves are
# always compiled.
# -buildvcs=false: the scratch module is nobody's checkout, but a .git
# above TMPDIR (one git cannot read makes the build fail) would be taken
# for its repository. The environment's own flags are kept, before ours.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw -buildvcs=false"
mkdir -p "$work/scratch" && cd "$work/scratch"

# As the README installs them: static (CGO_ENABLED=0).
CGO_ENABLED=0 go install "acpkit.dev/adapter/cmd/acprun@$version"
CGO_ENABLED=0 go install "acpkit.dev/conformance/cmd/acpcheck@$version" "acpkit.dev/conformance/cmd/refagent@$version"
for cmd in acprun acpcheck refagent; do
  go version -m "$GOBIN/$cmd" | grep -q 'CGO_ENABLED=0' || { echo "release-check: $cmd is not built static" >&2; exit 1; }
done

# The installed acprun is one binary: it runs the reference agent itself.
"$GOBIN/acprun" --version | grep -qF "$version" || { echo "release-check: acprun --version does not say $version" >&2; exit 1; }
"$GOBIN/acprun" --json "hello from the release check" > session.jsonl
tail -1 session.jsonl | grep -q '"exit_reason":"completed"' || { echo "release-check: acprun's session did not complete:" >&2; cat session.jsonl >&2; exit 1; }
"$GOBIN/acpcheck" --command "$GOBIN/refagent" --only initialize.version,session.new > check.txt ||
  { echo "release-check: acpcheck against the installed refagent failed:" >&2; cat check.txt >&2; exit 1; }

# The SDK from a module of its own.
mkdir sdkuser && cd sdkuser
go mod init example.com/sdkuser >/dev/null 2>&1
cat > main.go <<'GO'
package main

import (
	"fmt"

	"acpkit.dev/acpsdk/gen"
)

func main() { fmt.Println(gen.LatestProtocolVersion) }
GO
go get "acpkit.dev/acpsdk@$version" 2>/dev/null
go mod tidy 2>/dev/null
go build -o "$work/bin/sdkuser" .
echo "release-check: $version installs from a file:// proxy with no network: acprun, acpcheck, refagent, acpsdk"
