#!/usr/bin/env bash
# Installs Debian packages the tests need, idempotently: nothing happens
# when every named package is already installed; otherwise the package
# lists are refreshed once (per boot, see stamp below) and the missing
# packages installed. Several scripts may call it; dpkg's lock is waited
# for rather than failed on.
#
# usage: scripts/apt-install.sh PACKAGE...
set -euo pipefail
missing=()
for pkg in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "apt-install: need root to install: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
lock=(-o DPkg::Lock::Timeout=900)
# One `apt-get update` per boot: later calls reuse the lists it fetched.
stamp=/tmp/acpkit-apt-updated.$(cut -d' ' -f1 /proc/sys/kernel/random/boot_id 2>/dev/null || echo once)
if [ ! -e "$stamp" ]; then
  apt-get "${lock[@]}" update -qq
  touch "$stamp"
fi
apt-get "${lock[@]}" install -y -qq --no-install-recommends "${missing[@]}"
