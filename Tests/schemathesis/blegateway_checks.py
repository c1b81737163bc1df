"""Schemathesis checks and hooks of blegateway (loaded with SCHEMATHESIS_HOOKS).

The gateway answers Bluetooth conditions with 502, 503 and 504 by design
(a peripheral's ATT error, an adapter a fuzzer powered off, a timeout of
1 ms), so schemathesis's `not_a_server_error` is replaced by this check:
the gateway itself must never fail, which is a 500.

Streams stay open while their client is there, and a scan or a connect lasts
as long as it is asked to (up to a minute or two): the hook below keeps the
valid ones short so that every phase can reach every operation, streams
included, in minutes. Values a case gets wrong on purpose are left alone,
so the gateway still has to refuse them.
"""

import schemathesis

STREAMS = {
    "GET /v1/scan",
    "GET /v1/events",
    "GET /v1/devices/{address}/characteristics/{characteristic}/notifications",
    "GET /v1/peripheral/events",
}
STREAM_MILLISECONDS = 400
LONGEST_TIMEOUT_MS = 1500
# Operations with `timeout_ms`: without it a connect to an address nobody
# advertises looks for it for the gateway's default timeout.
TIMED = {
    "PATCH /v1/adapters/{adapter}",
    "DELETE /v1/devices/{address}",
    "POST /v1/devices/{address}/connect",
    "POST /v1/devices/{address}/pair",
    "POST /v1/devices/{address}/disconnect",
    "GET /v1/devices/{address}/characteristics/{characteristic}/value",
    "PUT /v1/devices/{address}/characteristics/{characteristic}/value",
    "GET /v1/devices/{address}/characteristics/{characteristic}/descriptors/{descriptor}/value",
    "PUT /v1/devices/{address}/characteristics/{characteristic}/descriptors/{descriptor}/value",
}
LONGEST_SCAN_MS = 400


@schemathesis.check
def no_internal_server_error(ctx, response, case):
    if response.status_code == 500:
        raise AssertionError(f"500 Internal Server Error: {response.text[:300]}")


def _shorten(container, key, longest, *, default=None):
    """Caps a valid integer at `longest`; sets `default` when the key is absent."""
    if not isinstance(container, dict):
        return
    value = container.get(key)
    if value is None:
        if default is not None:
            container[key] = default
    elif _is_integer(value) and value > longest:
        container[key] = longest


def _is_integer(value):
    """An integer as JSON Schema sees one: 20419 and 20419.0 alike."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    label = f"{case.method.upper()} {case.path}"
    if label in STREAMS:
        if case.query is None:
            case.query = {}
        _shorten(case.query, "duration_ms", STREAM_MILLISECONDS, default=STREAM_MILLISECONDS)
    if label in TIMED:
        if case.query is None:
            case.query = {}
        _shorten(case.query, "timeout_ms", LONGEST_TIMEOUT_MS, default=LONGEST_TIMEOUT_MS)
    if label == "POST /v1/scan":
        _shorten(case.body, "duration_ms", LONGEST_SCAN_MS)
    if label == "POST /v1/peripheral/advertisements":
        _fit_advertisement(case.body)


def _fit_advertisement(body):
    """Makes a valid advertisement fit the 31 bytes of legacy advertising,
    which a schema cannot express: well-typed data fields are dropped or
    shortened, and the intervals ordered; wrongly typed ones are left for
    the gateway to refuse."""
    if not isinstance(body, dict):
        return
    for key in ("manufacturer_data", "service_data"):
        if isinstance(body.get(key), dict):
            body.pop(key)
    if isinstance(body.get("service_uuids"), list):
        body.pop("service_uuids")
    if isinstance(body.get("ibeacon"), dict):
        # The beacon takes 30 of the 31 bytes.
        for key in ("eddystone_url", "appearance", "include_tx_power"):
            body.pop(key, None)
    if isinstance(body.get("eddystone_url"), str):
        body["eddystone_url"] = "https://example.com/"
    if isinstance(body.get("local_name"), str):
        body["local_name"] = body["local_name"].encode()[:29].decode("utf-8", "ignore")
    low, high = body.get("min_interval_ms"), body.get("max_interval_ms")
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (low, high))
    if numbers and low > high:
        body["min_interval_ms"], body["max_interval_ms"] = high, low
