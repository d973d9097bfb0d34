#!/usr/bin/env bash
# Vendors Leaflet from the npm registry into static/vendor/leaflet: the map library's script,
# stylesheet, images and licence, which the page embeds. Run at development time only (the build
# never runs npm), then commit the result. Usage: server/web/vendor.sh [VERSION]
set -euo pipefail
cd "$(dirname "$0")"
version=${1:-1.9.4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && npm pack --silent "leaflet@$version" >/dev/null)
tgz="$tmp/leaflet-$version.tgz"
# npm checks the tarball against the registry's record; check it again, and record it.
want=$(npm view "leaflet@$version" dist.integrity)
got=$(node -e 'const c=require("crypto"),f=require("fs");
  process.stdout.write("sha512-"+c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tgz")
if [ "$got" != "$want" ]; then
  echo "vendor.sh: leaflet-$version.tgz has integrity $got, the registry says $want" >&2
  exit 1
fi
tar -xzf "$tgz" -C "$tmp"

dest=static/vendor/leaflet
rm -rf "$dest"
mkdir -p "$dest/images"
cp "$tmp/package/dist/leaflet.js" "$tmp/package/dist/leaflet.css" "$tmp/package/LICENSE" "$dest/"
cp "$tmp/package/dist/images/"*.png "$dest/images/"
printf 'leaflet %s from the npm registry\nintegrity %s\nlicence BSD-2-Clause (LICENSE)\n' "$version" "$got" >"$dest/VERSION"
echo "vendored leaflet $version into $dest ($(du -sk "$dest" | cut -f1) KiB)"
