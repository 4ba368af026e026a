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
for dir in $(find . -name package-lock.json -not -path '*/node_modules/*' -printf '%h\n' | sort); do
  if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --silent)
  fi
done
