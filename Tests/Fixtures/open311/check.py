"""Checks an Open311 answer of PosterWatch.

    check.py json SCHEMA [--array] < answer.json   valid against SCHEMA (each item, with --array)
    check.py xml ANSWER.json < answer.xml          the XML, parsed, says what the JSON says
"""
import json
import sys
import xml.etree.ElementTree as ET

import jsonschema

# The containers of GeoReport v2's XML and the name of their items.
ITEMS = {"services": "service", "attributes": "attribute", "values": "value", "endpoints": "endpoint",
         "formats": "format", "errors": "error", "service_requests": "request",
         "service_request_updates": "request_update"}


def check_json(schema_path, array):
    with open(schema_path) as f:
        schema = json.load(f)
    answer = json.load(sys.stdin)
    items = answer if array else [answer]
    if array and (not isinstance(answer, list) or not answer):
        sys.exit("not a non-empty array")
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    problems = [f"item {i}: {e.message} at {list(e.path)}" for i, item in enumerate(items) for e in validator.iter_errors(item)]
    if problems:
        sys.exit("\n".join(problems))


def from_xml(element):
    children = list(element)
    if not children:
        return element.text
    if element.tag in ITEMS:
        if any(c.tag != ITEMS[element.tag] for c in children):
            sys.exit(f"<{element.tag}> holds other than <{ITEMS[element.tag]}>")
        return [from_xml(c) for c in children]
    return {c.tag: from_xml(c) for c in children}


def as_text(value):
    """The JSON value as XML writes it: scalars as text, null and empty lists as nothing."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        return [as_text(v) for v in value] or None
    if isinstance(value, dict):
        return {k: as_text(v) for k, v in value.items()}
    return value if value != "" else None


def check_xml(json_path):
    with open(json_path) as f:
        expected = as_text(json.load(f))
    root = ET.fromstring(sys.stdin.buffer.read())
    found = from_xml(root)
    if isinstance(expected, list) and root.tag not in ITEMS:
        sys.exit(f"root <{root.tag}> is no container")
    if found != expected:
        sys.exit(f"XML {json.dumps(found, ensure_ascii=False)[:2000]}\nJSON {json.dumps(expected, ensure_ascii=False)[:2000]}")


if __name__ == "__main__":
    if sys.argv[1] == "json":
        check_json(sys.argv[2], "--array" in sys.argv)
    else:
        check_xml(sys.argv[2])
