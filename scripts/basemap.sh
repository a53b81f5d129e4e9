#!/usr/bin/env bash
# Writes the map page's offline base layer, Sources/Server/Map/basemap.geojson: the rivers
# and lakes around Kyiv from GSHHG 2.3.7 at full resolution (Wessel & Smith; Debian's
# gmt-gshhg-full, LGPL-3+), cut to the region below by GMT's coast. Not part of the build:
# run it again only to change the region or the source.
#
#   apt-get install gmt gmt-gshhg-full && scripts/basemap.sh
set -euo pipefail
cd "$(dirname "$0")/.."
region=29.9/31.3/50.0/50.9
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# GMT leaves a gmt.history in the directory it runs in: the work directory.
(cd "$work" && gmt coast -R"$region" -Df -Ia -M > rivers.txt && gmt coast -R"$region" -Df -W -A0+l -M > lakes.txt)
python3 - "$work/rivers.txt" "$work/lakes.txt" "$region" > Sources/Server/Map/basemap.geojson <<'PY'
import json, sys

w, e, s, n = map(float, sys.argv[3].split("/"))

def segments(path):
    """GMT's multisegment text: a '>' header, then 'lon lat' lines. GMT hands lakes over
    by whole bins: their points are held to the region (its edge closes them)."""
    out, current, header = [], [], None
    for line in open(path):
        if line.startswith(">"):
            if len(current) > 1: out.append((header, current))
            current, header = [], line[1:].strip()
        elif line.strip():
            lon, lat = map(float, line.split()[:2])
            point = [round(min(max(lon, w), e), 5), round(min(max(lat, s), n), 5)]
            if not current or current[-1] != point: current.append(point)
    if len(current) > 1: out.append((header, current))
    return out

def level(header):
    return int(header.rsplit("Level", 1)[1].split()[0]) if header and "Level" in header else None

features = [
    {"type": "Feature", "properties": {"kind": "river", "level": level(h)}, "geometry": {"type": "LineString", "coordinates": c}}
    for h, c in segments(sys.argv[1])
] + [
    {"type": "Feature", "properties": {"kind": "lake"}, "geometry": {"type": "Polygon", "coordinates": [c if c[0] == c[-1] else c + [c[0]]]}}
    for h, c in segments(sys.argv[2])
]
document = {
    "type": "FeatureCollection",
    "bbox": [w, s, e, n],
    "source": "GSHHG 2.3.7 full resolution (P. Wessel and W. H. F. Smith), Debian package gmt-gshhg-full, LGPL-3+; cut by scripts/basemap.sh",
    "features": features,
}
json.dump(document, sys.stdout, separators=(",", ":"))
sys.stdout.write("\n")
PY
echo "basemap: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["features"]), "features")' Sources/Server/Map/basemap.geojson) written"
