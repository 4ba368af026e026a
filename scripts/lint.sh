#!/usr/bin/env bash
# lint: gofmt, staticcheck (this platform, windows/amd64 and darwin/arm64)
# with the checked-in staticcheck.conf, and `go mod tidy` clean in every
# module. go vet is `make vet` / `make vet-windows` / `make vet-darwin`,
# which `make lint` runs first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
fail=0

# Every Go file git knows, generated ones included (the generator gofmts).
unformatted=$(git ls-files -z '*.go' | xargs -0 gofmt -l)
if [ -n "$unformatted" ]; then
  echo "lint: not gofmt'ed (run gofmt -w):" >&2
  echo "$unformatted" >&2
  fail=1
fi

# staticcheck at the version tools/lint/go.mod pins, built outside the
# workspace so its dependencies never enter the SDK's module graph.
bin="$root/bin/staticcheck"
GOWORK=off $GO -C tools/lint build -o "$bin" honnef.co/go/tools/cmd/staticcheck
# RACE (make test's -race) makes its package loads, which compile each
# dependency for its export data, the builds go vet and the tests reuse.
GOFLAGS="${GOFLAGS:+$GOFLAGS }${RACE:-}" "$bin" acpkit.dev/... || fail=1
GOOS=windows GOARCH=amd64 "$bin" acpkit.dev/... || fail=1
GOOS=darwin GOARCH=arm64 GOFLAGS="${GOFLAGS:+$GOFLAGS }${DARWIN_GOFLAGS:-}" "$bin" acpkit.dev/... || fail=1

# go mod tidy, module by module, as a user outside the workspace sees each:
# the siblings at the release version come from a file:// proxy cut from
# this tree (scripts/release-check.sh does the same). Their go.sum lines are
# the one expected difference: an unpublished release has no hash to record,
# and in the workspace go.work supplies them.
version=$(awk '$1 == "acpkit.dev" && $2 ~ /^v/ { print $2; exit }' adapter/go.mod)
work=$(mktemp -d "${TMPDIR:-/tmp}/acpkit-lint.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
$GO run ./tools/release/cmd/modproxy -out "$work/proxy" -version "$version" . adapter
cache=$($GO env GOMODCACHE)
for mod in $(git ls-files go.mod '*/go.mod'); do
  dir=$(dirname "$mod")
  # A module cache of its own: the release cut here differs from any other.
  diff=$(cd "$dir" && GOWORK=off GOFLAGS="-mod=mod -modcacherw" GONOSUMDB=acpkit.dev GOMODCACHE="$work/modcache" \
    GOPROXY="file://$work/proxy,file://$cache/cache/download,$($GO env GOPROXY)" $GO mod tidy -diff 2>&1) && continue
  rest=$(printf '%s\n' "$diff" | grep -E '^[-+]' | grep -vE '^(\+\+\+|---) ' | grep -vE '^[-+]acpkit\.dev(/adapter)? ' || true)
  if [ -n "$rest" ] || ! printf '%s\n' "$diff" | grep -q '^diff '; then
    echo "lint: $mod is not tidy (go mod tidy in $dir):" >&2
    printf '%s\n' "$diff" >&2
    fail=1
  fi
done
[ "$fail" = 0 ] && echo "lint: clean"
exit "$fail"
