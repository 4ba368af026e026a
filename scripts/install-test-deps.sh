#!/usr/bin/env bash
# Installs what the tests need beyond Go modules, from the repo's own lock
# files, so a fresh machine needs nothing installed by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian packages, in one apt-get run: Wine (64-bit only) runs the
# windows/amd64 tests and mingw-w64 builds the ProcessPrng shim they need
# under Debian 12's Wine 8 (scripts/wine-test.sh); the SSH launch tests
# (adapter spec §21) run a private sshd on 127.0.0.1; headless Chromium
# opens acpcheck's HTML report (conformance/browsertest).
scripts/apt-install.sh wine wine64 gcc-mingw-w64-x86-64 openssh-server openssh-client chromium
# npm ci refuses a lock that lacks an optional dependency's entry, and the
# locks of OpenCode, Qwen Code and Cline lack the packages for other
# platforms that the registry they were locked against does not serve; npm
# install --no-save then installs the locked versions (integrity checked)
# and leaves the committed lock as it is.
npm_install() {
  (cd "$1" && { npm ci --no-audit --no-fund --silent 2>/dev/null ||
    npm install --no-save --no-audit --no-fund --silent; }) ||
    { echo "install-test-deps: npm failed in $1" >&2; return 1; }
}
# The directories install side by side: their time is mostly the registry's.
pids=()
for dir in $(find . -name package-lock.json -not -path '*/node_modules/*' -printf '%h\n' | sort); do
  if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    npm_install "$dir" &
    pids+=($!)
  fi
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" = 0 ]
# Copilot CLI unpacks its package (235 MB) into COPILOT_CACHE_HOME on its
# first start; the tests share one cache inside its node_modules (gone with
# it on a reinstall). Fill it here, under the lock the tests take
# (internal/realruntime/copilot.go), so no test pays for it.
copilot="$PWD/conformance/runtimes/copilot/node_modules"
if [ -x "$copilot/.bin/copilot" ] && [ ! -e "$copilot/.cache/copilot/.acpkit-warm" ]; then
  mkdir -p "$copilot/.cache/copilot"
  home=$(mktemp -d)
  flock "$copilot/.cache/copilot/.acpkit-lock" sh -c '
    [ -e "$1/.acpkit-warm" ] && exit 0
    HOME="$2" COPILOT_CACHE_HOME="$1" "$3" --version >/dev/null && touch "$1/.acpkit-warm"' \
    sh "$copilot/.cache/copilot" "$home" "$copilot/.bin/copilot"
  rm -rf "$home"
fi
