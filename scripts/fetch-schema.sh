#!/usr/bin/env bash
# Re-fetches every schema pinned in schema/pin.json with the ordinary npm
# client (npm pack of the pinned package) and verifies each file's sha256.
# A schema bump: edit the pin, run `make schema`, then `make generate` and
# review the diff (README.md, "Regenerating on a schema bump").
set -euo pipefail
cd "$(dirname "$0")/.."
pin=schema/pin.json
# One "key value" line per pin member; node is there wherever npm is.
fields=$(node -e '
  const p = require("./schema/pin.json");
  console.log("package", p.package); console.log("version", p.version);
  for (const s of p.surfaces) console.log("surface", s.file, s.sha256);
')
pkg=$(awk '$1=="package"{print $2}' <<<"$fields")
ver=$(awk '$1=="version"{print $2}' <<<"$fields")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$pkg@$ver" >/dev/null && tar xzf ./*.tgz)
status=0
while read -r _ file want; do
  # The package ships its schemas under schema/, as the repository keeps them.
  shipped="$tmp/package/$file"
  if [ ! -f "$shipped" ]; then
    echo "schema: $pkg@$ver ships no $file" >&2; status=1; continue
  fi
  got=$(sha256sum "$shipped" | cut -d' ' -f1)
  if [ "$got" != "$want" ]; then
    echo "schema: $pkg@$ver ships $file with sha256 $got, $pin says $want" >&2; status=1; continue
  fi
  mkdir -p "$(dirname "$file")"
  cp "$shipped" "$file"
  echo "schema: $file = $pkg@$ver (sha256 $got)"
done < <(awk '$1=="surface"' <<<"$fields")
# Schemas the package ships that the pin does not name: a bump may add one.
for f in "$tmp"/package/schema/v*/*.json; do
  rel=${f#"$tmp"/package/}
  grep -q "\"$rel\"" "$pin" || echo "schema: note: $pkg@$ver also ships $rel, which $pin does not pin" >&2
done
exit $status
