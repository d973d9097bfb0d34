#!/usr/bin/env bash
# Builds the page's offline basemap into static/basemap, and vendors the TopoJSON decoder the
# page draws it with into static/vendor/topojson-client. Run at development time only (the build
# never runs npm or apt), then commit the result. Usage: server/web/basemap.sh
#
# Why a bundled layer: a map background fetched from a public tile server tells that server
# which area the person looks at, which is where they are. This layer is public-domain
# Natural Earth data served by tracepriv itself, so the page asks no one else.
#
# Sources (each checked, and recorded in static/basemap/SOURCES):
#   - world-atlas 2.0.2 from the npm registry (ISC; its data is Natural Earth 1:110m, 1:50m and
#     1:10m admin-0 countries and land, public domain): country borders and coastlines;
#   - Debian's python3-geopandas 0.12.2 (its naturalearth_cities dataset is Natural Earth
#     1:110m populated places, public domain): capitals and major cities;
#   - topojson-simplify 3.0.3 and shapefile 0.6.6 from the npm registry: tools only, not shipped;
#   - topojson-client 3.1.0 from the npm registry (ISC): the decoder the page embeds.
# Natural Earth has a 1:10m roads layer, but no package of these registries redistributes it,
# so the layer has no roads (see README.md).
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# npm_fetch NAME VERSION: npm pack into $tmp and check the tarball against the registry's
# integrity record; prints the integrity.
npm_fetch() {
  (cd "$tmp" && npm pack --silent "$1@$2" >/dev/null)
  local tgz="$tmp/${1##*/}-$2.tgz" want got
  want=$(npm view "$1@$2" dist.integrity)
  got=$(node -e 'const c=require("crypto"),f=require("fs");
    process.stdout.write("sha512-"+c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tgz")
  if [ "$got" != "$want" ]; then
    echo "basemap.sh: $1-$2.tgz has integrity $got, the registry says $want" >&2
    exit 1
  fi
  mkdir -p "$tmp/$1" && tar -xzf "$tgz" -C "$tmp/$1"
  echo "$got"
}

atlas=$(npm_fetch world-atlas 2.0.2)
client=$(npm_fetch topojson-client 3.1.0)
(cd "$tmp" && npm install --silent --no-audit --no-fund --prefix tools \
  topojson-simplify@3.0.3 shapefile@0.6.6 >/dev/null)
(cd "$tmp" && apt-get download python3-geopandas=0.12.2-1 >/dev/null 2>&1) || {
  echo "basemap.sh: apt-get download python3-geopandas=0.12.2-1 failed (run apt-get update?)" >&2
  exit 1
}
deb=$(ls "$tmp"/python3-geopandas_0.12.2-1_all.deb)
debsum=$(sha256sum "$deb" | cut -d' ' -f1)
dpkg-deb -x "$deb" "$tmp/geopandas"
cities="$tmp/geopandas/usr/lib/python3/dist-packages/geopandas/datasets/naturalearth_cities/naturalearth_cities.shp"

dest=static/basemap
rm -rf "$dest" static/vendor/topojson-client
mkdir -p "$dest" static/vendor/topojson-client

# Borders and coastlines at three scales, each drawn only at the zooms it is for (app.js's
# BASEMAP_LAYERS): 1:110m while the whole world is in view, 1:50m for a continent, and 1:10m at
# city zoom, each fetched the first time the map gets there; a world of 1:10m vertices drawn at
# every zoom cost each page load about 2 CPU-s in headless Chromium for detail no screen showed. Drop the
# country names (the page does not label countries), then remove the vertices whose triangle is
# under S steradians: none for 1:110m, 3e-7 (about 12 km², under 2 pixels at the 1:50m layer's
# closest zoom) for 1:50m, 3e-8 (about 1.2 km², coastlines within a few hundred metres at city
# zoom) for 1:10m.
for scale in 110m:0 50m:3e-7 10m:3e-8; do
  node -e 'const f=require("fs"),t=JSON.parse(f.readFileSync(process.argv[1]));
    for (const g of t.objects.countries.geometries) delete g.properties;
    f.writeFileSync(process.argv[2], JSON.stringify(t));' \
    "$tmp/world-atlas/package/countries-${scale%%:*}.json" "$tmp/countries.json"
  "$tmp/tools/node_modules/.bin/toposimplify" -s "${scale##*:}" -f <"$tmp/countries.json" >"$dest/world-${scale%%:*}.topo.json"
done

# Places: the shapefile as one GeoJSON FeatureCollection of points with a name.
"$tmp/tools/node_modules/.bin/shp2json" --encoding utf-8 "$cities" >"$dest/places.geo.json"

cp "$tmp/topojson-client/package/dist/topojson-client.min.js" "$tmp/topojson-client/package/LICENSE" \
  static/vendor/topojson-client/
printf 'topojson-client 3.1.0 from the npm registry\nintegrity %s\nlicence ISC (LICENSE)\n' "$client" \
  >static/vendor/topojson-client/VERSION

cat >"$dest/SOURCES" <<EOF
Natural Earth (naturalearthdata.com): public domain. Made by server/web/basemap.sh.
world-110m.topo.json, world-50m.topo.json, world-10m.topo.json: Natural Earth 1:110m, 1:50m
  and 1:10m admin-0 countries and land, from world-atlas 2.0.2 (npm registry, integrity $atlas,
  ISC), countries-110m.json, countries-50m.json and countries-10m.json, names dropped, passed
  through topojson-simplify 3.0.3 (toposimplify -s 0 -f, -s 3e-7 -f and -s 3e-8 -f).
places.geo.json: Natural Earth 1:110m populated places, from Debian's python3-geopandas
  0.12.2-1 (sha256 $debsum), datasets/naturalearth_cities, by shapefile 0.6.6 (shp2json).
EOF
echo "basemap: $(du -sk "$dest" | cut -f1) KiB in $dest"
