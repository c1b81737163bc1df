"""Checks the retained MQTT messages of a gateway against Home Assistant's
MQTT discovery rules, and prints a JSON summary of what it found.

Standard input: one JSON object a line, as `mosquitto_sub -F %j` prints
them ({"topic", "payload", "retain", ...}). Exits non-zero, listing every
violation, when a discovery payload breaks a rule.

The rules are Home Assistant's own (homeassistant/components/mqtt:
schemas.py's MQTT_ENTITY_COMMON_SCHEMA, MQTT_ENTITY_DEVICE_INFO_SCHEMA,
MQTT_ORIGIN_INFO_SCHEMA and availability schemas, sensor.py's and
binary_sensor.py's platform schemas and sensor validation, util.py's topic
checks, and the sensor and binary_sensor device classes, units and state
classes of homeassistant/components/sensor/const.py and binary_sensor),
written here with voluptuous as Home Assistant writes them. Home Assistant
itself needs a newer Python than Debian 12's, so it is not imported. The
schemas here refuse keys Home Assistant does not know (it would drop them
silently), which also catches deprecated ones: `object_id` was replaced by
`default_entity_id`.
"""

import json
import re
import sys
from collections.abc import Callable
from typing import Any

import voluptuous as vol

# homeassistant/components/sensor/const.py: SensorDeviceClass (the ones a
# BLE gateway could send; any other is refused here as an unknown class).
SENSOR_DEVICE_CLASS_UNITS: dict[str, set[str | None]] = {
    "battery": {"%"},
    "humidity": {"%"},
    "temperature": {"°C", "°F", "K"},
    "signal_strength": {"dB", "dBm"},
    "pressure": {"Pa", "hPa", "kPa", "bar", "cbar", "mbar", "mmHg", "inHg", "psi"},
    "illuminance": {"lx"},
    "voltage": {"V", "mV", "µV", "kV", "MV"},
    "power": {"W", "mW", "kW", "MW", "GW", "TW"},
    "energy": {
        "J",
        "kJ",
        "MJ",
        "GJ",
        "mWh",
        "Wh",
        "kWh",
        "MWh",
        "GWh",
        "TWh",
        "cal",
        "kcal",
        "Mcal",
        "Gcal",
    },
    "moisture": {"%"},
}
# DEVICE_CLASS_STATE_CLASSES for those classes.
SENSOR_DEVICE_CLASS_STATE_CLASSES: dict[str, set[str]] = {
    "battery": {"measurement"},
    "humidity": {"measurement"},
    "temperature": {"measurement"},
    "signal_strength": {"measurement"},
    "pressure": {"measurement"},
    "illuminance": {"measurement"},
    "voltage": {"measurement"},
    "power": {"measurement"},
    "energy": {"total", "total_increasing"},
    "moisture": {"measurement"},
}
STATE_CLASSES = {"measurement", "measurement_angle", "total", "total_increasing"}
# homeassistant/components/binary_sensor: BinarySensorDeviceClass.
BINARY_SENSOR_DEVICE_CLASSES = {
    "battery",
    "battery_charging",
    "carbon_monoxide",
    "cold",
    "connectivity",
    "door",
    "garage_door",
    "gas",
    "heat",
    "light",
    "lock",
    "moisture",
    "motion",
    "moving",
    "occupancy",
    "opening",
    "plug",
    "power",
    "presence",
    "problem",
    "running",
    "safety",
    "smoke",
    "sound",
    "tamper",
    "update",
    "vibration",
    "window",
}
ENTITY_CATEGORIES = {"config", "diagnostic"}
AVAILABILITY_MODES = {"all", "any", "latest"}
# cv.entity_id (homeassistant/core.py VALID_ENTITY_ID).
VALID_ENTITY_ID = re.compile(r"^(?!.+__)(?!_)[\da-z_]+(?<!_)\.(?!_)[\da-z_]+(?<!_)$")
# Discovery topics: <prefix>/<component>/[<node_id>/]<object_id>/config, ids [a-zA-Z0-9_-].
DISCOVERY_TOPIC = re.compile(
    r"^(?P<prefix>[^/]+)/(?P<component>\w+)/(?:(?P<node>[a-zA-Z0-9_-]+)/)?(?P<object>[a-zA-Z0-9_-]+)/config$"
)


def valid_topic(value: Any) -> str:
    """util.py valid_topic: a UTF-8 string of 1 to 65535 bytes, no NUL, no
    control characters or non-characters."""
    text = vol.Coerce(str)(value)
    raw = text.encode("utf-8")
    if not raw or len(raw) > 65535:
        raise vol.Invalid("topic must be 1 to 65535 bytes")
    if "\0" in text:
        raise vol.Invalid("topic must not contain NUL")
    if any(0x1F >= ord(c) or 0x7F <= ord(c) <= 0x9F or 0xFDD0 <= ord(c) <= 0xFDEF for c in text):
        raise vol.Invalid("topic must not contain control characters or non-characters")
    return text


def valid_subscribe_topic(value: Any) -> str:
    """util.py valid_subscribe_topic: wildcards only as whole levels."""
    text = valid_topic(value)
    for index, char in enumerate(text):
        if char == "+" and (
            (index > 0 and text[index - 1] != "/") or (index < len(text) - 1 and text[index + 1] != "/")
        ):
            raise vol.Invalid("single-level wildcard must occupy an entire level")
        if char == "#" and (index != len(text) - 1 or (index > 0 and text[index - 1] != "/")):
            raise vol.Invalid("multi-level wildcard must be the last character, alone in its level")
    return text


def entity_id_of(domain: str) -> Any:
    def check(value: Any) -> str:
        text = vol.Coerce(str)(value)
        if not VALID_ENTITY_ID.match(text) or text.split(".")[0] != domain:
            raise vol.Invalid(f"default_entity_id must be a valid {domain}.* entity id: {text!r}")
        return text

    return check


def icon(value: Any) -> str:
    """cv.icon: prefix:name."""
    text = vol.Coerce(str)(value)
    if ":" not in text:
        raise vol.Invalid("icons should be specified in the form prefix:name")
    return text


def url(value: Any) -> str:
    text = vol.Coerce(str)(value)
    if not re.match(r"^https?://", text):
        raise vol.Invalid("not a URL")
    return text


def has_identifier(value: dict[str, Any]) -> dict[str, Any]:
    if value.get("identifiers") or value.get("connections"):
        return value
    raise vol.Invalid("Device must have at least one identifying value in 'identifiers' and/or 'connections'")


DEVICE = vol.All(
    vol.Schema(
        {
            vol.Optional("identifiers"): vol.All(vol.Coerce(list), [str]),
            vol.Optional("connections"): [vol.All(vol.Length(2, 2), [str])],
            vol.Optional("manufacturer"): str,
            vol.Optional("model"): str,
            vol.Optional("model_id"): str,
            vol.Optional("name"): str,
            vol.Optional("hw_version"): str,
            vol.Optional("serial_number"): str,
            vol.Optional("sw_version"): str,
            vol.Optional("via_device"): str,
            vol.Optional("suggested_area"): str,
            vol.Optional("configuration_url"): url,
        }
    ),
    has_identifier,
)
ORIGIN = vol.Schema(
    {
        vol.Required("name"): str,
        vol.Optional("sw_version"): str,
        vol.Optional("support_url"): url,
    }
)
AVAILABILITY_ENTRY = vol.Schema(
    {
        vol.Required("topic"): valid_subscribe_topic,
        vol.Optional("payload_available"): str,
        vol.Optional("payload_not_available"): str,
        vol.Optional("value_template"): str,
    }
)
COMMON: dict[Any, Any] = {
    vol.Optional("name"): vol.Any(str, None),
    vol.Optional("unique_id"): str,
    vol.Optional("device"): DEVICE,
    vol.Optional("origin"): ORIGIN,
    vol.Optional("enabled_by_default"): bool,
    vol.Optional("entity_category"): vol.In(ENTITY_CATEGORIES),
    vol.Optional("icon"): icon,
    vol.Optional("json_attributes_topic"): valid_subscribe_topic,
    vol.Optional("json_attributes_template"): str,
    vol.Exclusive("availability_topic", "availability"): valid_subscribe_topic,
    vol.Exclusive("availability", "availability"): [AVAILABILITY_ENTRY],
    vol.Optional("availability_mode"): vol.In(AVAILABILITY_MODES),
    vol.Optional("availability_template"): str,
    vol.Optional("payload_available"): str,
    vol.Optional("payload_not_available"): str,
    vol.Optional("qos"): vol.In([0, 1, 2]),
    vol.Optional("encoding"): str,
    vol.Optional("value_template"): str,
}


def sensor_units_and_classes(config: dict[str, Any]) -> dict[str, Any]:
    """sensor.py validate_sensor_state_and_device_class_config, and the
    sensor entity's unit and state class checks."""
    device_class = config.get("device_class")
    state_class = config.get("state_class")
    unit = config.get("unit_of_measurement")
    if device_class is not None:
        if unit not in SENSOR_DEVICE_CLASS_UNITS[device_class]:
            raise vol.Invalid(f"the unit {unit!r} is not valid for device class {device_class!r}")
        if state_class is not None and state_class not in SENSOR_DEVICE_CLASS_STATE_CLASSES[device_class]:
            raise vol.Invalid(f"state class {state_class!r} is not valid for device class {device_class!r}")
    if state_class is not None and unit is None and device_class is None:
        raise vol.Invalid("a measurement without a unit or device class")
    return config


SCHEMAS: dict[str, Callable[[Any], Any]] = {
    "sensor": vol.All(
        vol.Schema(
            {
                **COMMON,
                vol.Required("state_topic"): valid_subscribe_topic,
                vol.Optional("default_entity_id"): entity_id_of("sensor"),
                vol.Optional("device_class"): vol.In(set(SENSOR_DEVICE_CLASS_UNITS)),
                vol.Optional("state_class"): vol.In(STATE_CLASSES),
                vol.Optional("unit_of_measurement"): str,
                vol.Optional("suggested_display_precision"): vol.All(int, vol.Range(min=0)),
                vol.Optional("expire_after"): vol.All(int, vol.Range(min=0)),
                vol.Optional("force_update"): bool,
            }
        ),
        sensor_units_and_classes,
    ),
    "binary_sensor": vol.Schema(
        {
            **COMMON,
            vol.Required("state_topic"): valid_subscribe_topic,
            vol.Optional("default_entity_id"): entity_id_of("binary_sensor"),
            vol.Optional("device_class"): vol.In(BINARY_SENSOR_DEVICE_CLASSES),
            vol.Optional("payload_on"): str,
            vol.Optional("payload_off"): str,
            vol.Optional("expire_after"): vol.All(int, vol.Range(min=0)),
            vol.Optional("off_delay"): vol.All(int, vol.Range(min=0)),
            vol.Optional("force_update"): bool,
        }
    ),
}


def main() -> int:
    retained: dict[str, str] = {}
    for line in sys.stdin:
        if line.strip():
            message = json.loads(line)
            if message.get("retain"):
                retained[message["topic"]] = message.get("payload") or ""
    problems: list[str] = []
    entities: list[dict[str, Any]] = []
    device_ids: set[str] = set()
    for topic, payload in sorted(retained.items()):
        match = DISCOVERY_TOPIC.match(topic)
        if not match or not payload:
            continue
        component = match["component"]
        if component not in SCHEMAS:
            problems.append(f"{topic}: component {component} is not checked here")
            continue
        try:
            config = SCHEMAS[component](json.loads(payload))
        except (vol.Invalid, ValueError) as error:
            problems.append(f"{topic}: {error}")
            continue
        device = config.get("device", {})
        device_ids.update(device.get("identifiers", []))
        entities.append({"topic": topic, "component": component, "config": config})
    for entity in entities:
        config = entity["config"]
        via = config.get("device", {}).get("via_device")
        if via is not None and via not in device_ids:
            problems.append(f"{entity['topic']}: via_device {via} names no announced device")
        topics = [config["state_topic"], config.get("availability_topic")]
        topics += [item["topic"] for item in config.get("availability", [])]
        for state in filter(None, topics):
            if state not in retained:
                problems.append(f"{entity['topic']}: {state} has no retained state")
    for problem in problems:
        print(problem, file=sys.stderr)
    summary = [
        {
            "topic": entity["topic"],
            "component": entity["component"],
            "device_class": entity["config"].get("device_class"),
            "device_name": entity["config"].get("device", {}).get("name"),
            "manufacturer": entity["config"].get("device", {}).get("manufacturer"),
            "model": entity["config"].get("device", {}).get("model"),
            "state": retained.get(entity["config"]["state_topic"]),
        }
        for entity in entities
    ]
    json.dump({"entities": summary, "retained": retained}, sys.stdout)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
