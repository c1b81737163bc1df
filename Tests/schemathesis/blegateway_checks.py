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

STREAMS = {"GET /v1/scan", "GET /v1/events", "GET /v1/devices/{address}/characteristics/{characteristic}/notifications"}
STREAM_MILLISECONDS = 400
LONGEST_TIMEOUT_MS = 1500
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
    elif isinstance(value, bool):
        return
    elif isinstance(value, int) and value > longest:
        container[key] = longest
    elif isinstance(value, float) and value.is_integer() and value > longest:
        # 59999.0 is an integer to JSON Schema, and to the gateway.
        container[key] = longest


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    label = f"{case.method.upper()} {case.path}"
    if label in STREAMS:
        if case.query is None:
            case.query = {}
        _shorten(case.query, "duration_ms", STREAM_MILLISECONDS, default=STREAM_MILLISECONDS)
    _shorten(case.query, "timeout_ms", LONGEST_TIMEOUT_MS)
    if label.endswith("/connect"):
        # Connecting to an address BlueZ has not heard scans for it until
        # the timeout, 30 s by default.
        if case.query is None:
            case.query = {}
        _shorten(case.query, "timeout_ms", LONGEST_TIMEOUT_MS, default=LONGEST_TIMEOUT_MS)
    if label == "POST /v1/scan":
        _shorten(case.body, "duration_ms", LONGEST_SCAN_MS)
