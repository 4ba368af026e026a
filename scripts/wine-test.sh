#!/usr/bin/env bash
# Runs Go test packages as windows/amd64 binaries under Wine, with real
# Windows processes, job objects and named pipes.
#
# usage: scripts/wine-test.sh PACKAGE[=RUN]...
#
# Each package is compiled with `GOOS=windows go test -c` and run from its
# own directory; RUN, when given, selects its tests (-test.run). Everything lives in a throwaway directory: a 64-bit Wine
# prefix (created fresh, a few seconds) and the test binaries. The prefix's
# wineserver is started here and shut down on exit, so nothing outlives the
# run, and a concurrent run elsewhere (another prefix) is never touched.
#
# Debian 12's Wine 8 lacks bcryptprimitives.dll, whose ProcessPrng every Go
# 1.22+ binary needs; scripts/wine/bcryptprimitives.c implements it over
# RtlGenRandom and is compiled here with mingw-w64 into the prefix.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}

for tool in wine wineserver x86_64-w64-mingw32-gcc; do
  if ! command -v "$tool" >/dev/null; then
    echo "wine-test: $tool not found; run scripts/install-test-deps.sh (as root)" >&2
    exit 1
  fi
done
[ $# -gt 0 ] || { echo "usage: $0 PACKAGE[=RUN]..." >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/acpkit-wine.XXXXXX")
export WINEPREFIX="$work/prefix" WINEARCH=win64 WINEDEBUG=-all
# No Mono or Gecko: the prefix would otherwise ask to download them.
export WINEDLLOVERRIDES="mscoree,mshtml="
cleanup() {
  wineserver -k 2>/dev/null || true
  wineserver -w 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

start=$SECONDS
x86_64-w64-mingw32-gcc -O2 -shared -s -o "$work/bcryptprimitives.dll" \
  scripts/wine/bcryptprimitives.c -ladvapi32
mkdir -p "$WINEPREFIX"
wineserver -p        # persistent until the -k above
timeout 600 wine wineboot --init >/dev/null 2>&1
cp "$work/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/"
echo "wine-test: prefix ready in $((SECONDS - start))s"

status=0
for arg in "$@"; do
  pkg=${arg%%=*}
  run=.
  [ "$pkg" = "$arg" ] || run=${arg#*=}
  dir=$($GO list -f '{{.Dir}}' "$pkg")
  exe="$work/$(basename "$dir").test.exe"
  GOOS=windows GOARCH=amd64 $GO test -c -o "$exe" "$pkg"
  t=$SECONDS
  if (cd "$dir" && wine "$exe" -test.count=1 -test.timeout=5m -test.run="$run"); then
    echo "ok   $pkg (windows/amd64 under Wine) $((SECONDS - t))s"
  else
    echo "FAIL $pkg (windows/amd64 under Wine)"
    status=1
  fi
done
echo "wine-test: done in $((SECONDS - start))s"
exit $status
