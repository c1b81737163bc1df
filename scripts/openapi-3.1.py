#!/usr/bin/env python3
"""Writes openapi-3.1.yaml, the OpenAPI 3.1 edition of openapi.yaml (3.2),
for client generators that read 3.1 only (openapi-python-client, OpenAPI
Generator 7): the same paths, operations and schemas, with each
`text/event-stream` response's 3.2 `itemSchema` replaced by a string schema
whose description lists the stream's events and the schema of each one's
`data` (the event schema stays in components, and `x-event-schema` names
it). A test checks that the committed file is this script's output; run it,
then scripts/embed-openapi.sh, after editing openapi.yaml.

    scripts/openapi-3.1.py            writes openapi-3.1.yaml
    scripts/openapi-3.1.py --stdout   prints it instead
"""

import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_PREFIX = "#/components/schemas/"
METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def name_of(reference: str) -> str:
    return reference.removeprefix(SCHEMA_PREFIX)


def data_schema(then: dict[str, Any]) -> str:
    """The name (or a short word) of what `data` holds in one if/then."""
    content = then.get("properties", {}).get("data", {}).get("contentSchema", {})
    if "$ref" in content:
        return f"`{name_of(content['$ref'])}`"
    if content.get("maxProperties") == 0:
        return "`{}`"
    return "JSON"


def event_types(components: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """The event type names a schema allows: its enum, const, or those of
    the schemas it is any of."""
    if "$ref" in schema:
        return event_types(components, components[name_of(schema["$ref"])])
    if "enum" in schema:
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    return [name for option in schema.get("anyOf", []) for name in event_types(components, option)]


def events_text(components: dict[str, Any], reference: str) -> str:
    """A description of a stream's events from its event schema: each event
    type with the schema of its `data`."""
    schema = components[name_of(reference)]
    types = event_types(components, schema["properties"]["event"])
    by_type: dict[str, str] = {}
    otherwise = data_schema({"properties": schema["properties"]})
    for branch in schema.get("allOf", []):
        condition = branch.get("if", {}).get("properties", {}).get("event", {})
        if "not" in condition:
            otherwise = data_schema(branch.get("then", {}))
            continue
        for event_type in event_types(components, condition):
            by_type[event_type] = data_schema(branch.get("then", {}))
    lines = [
        (
            "Server-Sent Events (`text/event-stream`): blocks of `id:` (the gateway-wide event id), `event:` "
            "(the type) and one `data:` line of JSON, and `:` comment heartbeats. Events, and what `data` holds:"
        ),
        "",
    ]
    lines += [f"- `{event_type}`: {by_type.get(event_type, otherwise)}" for event_type in types]
    lines += [
        "",
        f"(`{name_of(reference)}` in components describes one event; OpenAPI 3.2's `itemSchema` in /openapi.yaml.)",
    ]
    return "\n".join(lines)


def is_condition(schema: Any) -> bool:
    """An `allOf` member that only constrains (if/then, or a `not`), which
    generators cannot turn into a type."""
    return isinstance(schema, dict) and ("if" in schema or set(schema) == {"not"})


def simplify(node: Any) -> None:
    """Moves conditional `allOf` members into `x-conditions` throughout, and
    a remaining single `$ref` up into its schema: openapi-python-client
    refuses "allOf a non-object", and these constraints are the gateway's to
    enforce (openapi.yaml keeps them)."""
    if isinstance(node, list):
        for item in node:
            simplify(item)
        return
    if not isinstance(node, dict):
        return
    for value in node.values():
        simplify(value)
    members = node.get("allOf")
    if not isinstance(members, list) or not any(is_condition(member) for member in members):
        return
    kept = [member for member in members if not is_condition(member)]
    node["x-conditions"] = [member for member in members if is_condition(member)]
    del node["allOf"]
    if len(kept) == 1 and set(kept[0]) == {"$ref"} and "type" not in node and "properties" not in node:
        node["$ref"] = kept[0]["$ref"]
    elif kept:
        node["allOf"] = kept


def convert(document: dict[str, Any]) -> dict[str, Any]:
    components = document["components"]["schemas"]
    document["openapi"] = "3.1.1"
    document["info"]["description"] = (
        "**This edition.** The OpenAPI 3.1 edition of the gateway's OpenAPI 3.2 document (`GET /openapi.yaml`), "
        "for client generators: the same operations and schemas; streams are `text/event-stream` strings, "
        "their events listed in each response; conditional constraints (`if`/`then`, `not`) are under "
        "`x-conditions`, for the gateway to enforce.\n\n" + document["info"]["description"]
    )
    for path in document["paths"].values():
        for method, operation in path.items():
            if method not in METHODS:
                continue
            for response in operation.get("responses", {}).values():
                for media_type in response.get("content", {}).values():
                    item = media_type.pop("itemSchema", None)
                    if item is None:
                        continue
                    media_type["schema"] = {
                        "type": "string",
                        "description": events_text(components, item["$ref"]),
                    }
                    media_type["x-event-schema"] = item
    simplify(document)
    return document


class Dumper(yaml.SafeDumper):
    """Block style for text with line breaks, so the descriptions stay readable."""


def represent_text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


Dumper.add_representer(str, represent_text)


def render() -> str:
    document = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    header = "# Generated by scripts/openapi-3.1.py from openapi.yaml (OpenAPI 3.2): do not edit.\n"
    return header + yaml.dump(
        convert(document),
        Dumper=Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )


def main() -> None:
    text = render()
    if "--stdout" in sys.argv[1:]:
        sys.stdout.write(text)
    else:
        (ROOT / "openapi-3.1.yaml").write_text(text, encoding="utf-8")
        print("wrote openapi-3.1.yaml")


if __name__ == "__main__":
    main()
