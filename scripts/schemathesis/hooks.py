"""Schemathesis hooks for PosterWatch's /openapi.json.

JSON Schema cannot say everything the server checks: a bbox's south edge must not be
north of its north edge, a datetime interval must not end before it starts, a tile's
column and row must lie below 2^z, Open311's start_date and end_date lie at most 90
days apart in order, /v1/clusters takes at most 16,384 grid cells, and an
EPSG code must be one PROJ knows. The document says each of these in words. Here the
positive cases that break one of them are dropped, and the custom formats the document
names generate values that keep them; negative cases are left alone.
"""
import math
import re
from urllib.parse import unquote

import schemathesis
from hypothesis import strategies as st
from schemathesis import GenerationMode

KNOWN_CRS = {
    "epsg:4326", "epsg:3857", "epsg:32636", "epsg:32635", "epsg:6384", "epsg:5564", "epsg:2154", "ogc:crs84",
    "http://www.opengis.net/def/crs/epsg/0/3857", "http://www.opengis.net/def/crs/epsg/0/4326",
    "http://www.opengis.net/def/crs/ogc/1.3/crs84",
}
MAX_CELLS = 16_384
CELLS_PER_TILE_SIDE = 4  # 64-px cells on 256-px tiles


def _number(low, high):
    value = st.floats(low, high, allow_nan=False, allow_infinity=False)
    return st.one_of(value.map(lambda v: repr(round(v, 6))), value.map(repr), st.integers(int(low), int(high)).map(str))


@st.composite
def _bbox(draw):
    west, east = draw(_number(-180, 180)), draw(_number(-180, 180))
    lat = sorted([float(draw(_number(-90, 90))), float(draw(_number(-90, 90)))])
    south, north = (repr(lat[0]), repr(lat[1]))
    return f"{west},{south},{east},{north}"


def _instant(draw):
    seconds = draw(st.integers(0, 4_102_444_800))
    days, rest = divmod(seconds, 86_400)
    y, m, d = _civil(days)
    text = f"{y:04d}-{m:02d}-{d:02d}T{rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}"
    if draw(st.booleans()):
        text += "." + str(draw(st.integers(0, 999))).zfill(3)
    return text + draw(st.sampled_from(["Z", "z", "+02:00", "-05:30"]))


@st.composite
def _datetime_interval(draw):
    a, b = _instant(draw), _instant(draw)
    a, b = sorted([a, b], key=_utc_seconds)
    return draw(st.sampled_from([a, f"{a}/{b}", f"{a}/..", f"{a}/", f"../{b}", f"/{b}"]))


schemathesis.openapi.format("bbox", _bbox())
schemathesis.openapi.format("datetime-interval", _datetime_interval())
schemathesis.openapi.format("phone", st.builds(
    lambda operator, number, style: style.format(operator, number),
    st.sampled_from(["50", "63", "66", "67", "68", "73", "93", "95", "96", "97", "98", "99"]), st.integers(0, 9_999_999).map(lambda n: f"{n:07d}"),
    st.sampled_from(["0{}{}", "+380{}{}", "380{}{}"])))
schemathesis.openapi.format("crs", st.sampled_from(sorted(KNOWN_CRS) + ["EPSG:3857", "OGC:CRS84", " EPSG:4326 "]))


def _civil(days):
    """The proleptic Gregorian date of a day count since 1970-01-01."""
    days += 719_468
    era = days // 146_097
    doe = days - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (m <= 2), m, d


def _days(y, m, d):
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    return era * 146_097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719_468


INSTANT = re.compile(r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(\.\d+)?([Zz]|([+-])(\d\d):(\d\d))$")


def _utc_seconds(text):
    match = INSTANT.match(text)
    y, mo, d, h, mi, s = (int(g) for g in match.groups()[:6])
    fraction = float(match.group(7) or 0)
    offset = 0 if match.group(9) is None else (int(match.group(10)) * 60 + int(match.group(11))) * 60 * (-1 if match.group(9) == "-" else 1)
    seconds = _days(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset
    return min(max(seconds, -62_135_596_800), 253_402_300_799) + fraction


def _window_ok(start, end):
    """Open311's start_date and end_date: in order, at most 90 days apart."""
    try:
        a, b = _utc_seconds(start), _utc_seconds(end)
    except (AttributeError, TypeError, ValueError):
        return True  # not this hook's business
    return a <= b <= a + 90 * 86_400


def _bbox_ok(text):
    try:
        west, south, east, north = (float(v) for v in text.split(","))
    except ValueError:
        return True  # not this hook's business
    return all(math.isfinite(v) for v in (west, south, east, north)) and abs(west) <= 180 and abs(east) <= 180 \
        and abs(south) <= 90 and abs(north) <= 90 and south <= north


def _interval_ok(text):
    parts = text.split("/")
    ends = [p for p in parts if p not in ("", "..")]
    try:
        return len(ends) < 2 or _utc_seconds(ends[0]) <= _utc_seconds(ends[1])
    except (AttributeError, ValueError):
        return True


def _cells(text, zoom):
    """An upper bound of the grid cells /v1/clusters counts for a box at a zoom."""
    west, south, east, north = (float(v) for v in text.split(","))
    n = CELLS_PER_TILE_SIDE << zoom

    def x(lon):
        return (lon + 180) / 360 * n

    def y(lat):
        lat = max(min(lat, 85.05112878), -85.05112878)
        s = math.sin(math.radians(lat))
        return (0.5 - math.log((1 + s) / (1 - s)) / (4 * math.pi)) * n

    columns = (x(east) - x(west) + 2) if west <= east else (x(180) - x(west) + x(east) - x(-180) + 4)
    rows = y(south) - y(north) + 2
    return columns * rows


def _integer(value):
    """A whole number as a case holds it: an int, or (in the coverage phase) its text."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


@schemathesis.hook
def filter_case(context, case):
    if case.meta is not None and case.meta.generation.mode != GenerationMode.POSITIVE:
        return True  # negative cases are left as they are; examples (no meta) are positive
    query = case.query or {}
    path = case.path_parameters or {}
    if isinstance(query.get("bbox"), str) and not _bbox_ok(query["bbox"]):
        return False
    if isinstance(query.get("datetime"), str) and not _interval_ok(query["datetime"]):
        return False
    if isinstance(query.get("start_date"), str) and isinstance(query.get("end_date"), str) \
            and not _window_ok(query["start_date"], query["end_date"]):
        return False
    if isinstance(query.get("crs"), str) and query["crs"].strip(" ").lower() not in KNOWN_CRS:
        return False
    zoom = _integer(query.get("zoom"))
    if case.operation.path == "/v1/clusters" and isinstance(query.get("bbox"), str) and zoom is not None:
        try:
            if _cells(query["bbox"], zoom) > MAX_CELLS:
                return False
        except ValueError:
            pass
    if case.operation.path == "/v1/tiles/{z}/{x}/{y}.png":
        z, x = _integer(path.get("z")), _integer(path.get("x"))
        y = _integer(unquote(str(path.get("y", ""))).removesuffix("@2x"))
        if z is not None and z <= 62 and ((x or 0) >= 1 << z or (y or 0) >= 1 << z):
            return False
    return True
