#!/usr/bin/env bash
# Re-fetches the pinned ACP schema with the ordinary npm client and verifies
# it against schema/pin.json. A schema bump: edit the pin, run `make schema`,
# then `make generate` and review the diff.
set -euo pipefail
cd "$(dirname "$0")/.."
pin=schema/pin.json
field() { sed -n "s/.*\"$1\": *\"\([^\"]*\)\".*/\1/p" "$pin"; }
pkg=$(field package); ver=$(field version); want=$(field sha256); file=$(field file)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$pkg@$ver" >/dev/null && tar xzf ./*.tgz)
got=$(sha256sum "$tmp/package/${file#schema/}" | cut -d' ' -f1)
if [ "$got" != "$want" ]; then
  echo "schema: $pkg@$ver ships sha256 $got, pin says $want" >&2
  exit 1
fi
cp "$tmp/package/${file#schema/}" "$file"
echo "schema: $file = $pkg@$ver (sha256 $got)"
