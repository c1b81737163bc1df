"""The gateway's problems as the exceptions Bleak's BlueZ backend raises.

Bleak's backend turns BlueZ's D-Bus errors into `BleakGATTProtocolError`
where they stand for an ATT error (bleak/backends/bluezdbus/utils.py,
`assert_gatt_reply`), and into `BleakDBusError` otherwise; the gateway's
problems carry the same D-Bus error name (`dbus_error`), its message
(`detail`) and the ATT code (`att_error`), so the same rules apply to them.
"""

from __future__ import annotations

from bleak.exc import (
    BleakBluetoothNotAvailableError,
    BleakBluetoothNotAvailableReason,
    BleakDBusError,
    BleakError,
    BleakGATTProtocolError,
    BleakGATTProtocolErrorCode,
)

from ..problem import GatewayError, GatewayProblem

# What each D-Bus error (with its message, where BlueZ uses one name for
# several causes) stands for: BlueZ's create_gatt_dbus_error(), read backwards.
_GATT_CODES: dict[tuple[str, str | None], BleakGATTProtocolErrorCode] = {
    ("org.bluez.Error.NotPermitted", "Read not permitted"): BleakGATTProtocolErrorCode.READ_NOT_PERMITTED,
    ("org.bluez.Error.NotPermitted", "Write not permitted"): BleakGATTProtocolErrorCode.WRITE_NOT_PERMITTED,
    ("org.bluez.Error.NotSupported", None): BleakGATTProtocolErrorCode.REQUEST_NOT_SUPPORTED,
    ("org.bluez.Error.NotAuthorized", None): BleakGATTProtocolErrorCode.INSUFFICIENT_AUTHORIZATION,
    ("org.bluez.Error.InvalidArguments", "Invalid offset"): BleakGATTProtocolErrorCode.INVALID_OFFSET,
    ("org.bluez.Error.InvalidArguments", "Invalid Length"): BleakGATTProtocolErrorCode.INVALID_ATTRIBUTE_VALUE_LENGTH,
    ("org.bluez.Error.ImproperlyConfigured", None): BleakGATTProtocolErrorCode.CCCD_IMPROPERLY_CONFIGURED,
}


class BleakGatewayError(BleakError):
    """The gateway could not be reached, refused the API key, or answered
    with a problem that has no BlueZ error behind it. `cause` is the
    `GatewayError` (a `GatewayProblem` carries `status`, `type`, `detail`)."""

    def __init__(self, cause: GatewayError) -> None:
        super().__init__(str(cause))
        self.cause = cause


def bleak_error(error: GatewayError, *, gatt: bool = False, start_notify: bool = False) -> Exception:
    """The exception Bleak's BlueZ backend would raise for `error`.

    `gatt`: the request was a GATT operation, whose ATT errors become
    `BleakGATTProtocolError`; `start_notify`: it subscribed, where BlueZ's
    NotSupported means the characteristic cannot notify (not an ATT error).
    """
    if not isinstance(error, GatewayProblem):
        return BleakGatewayError(error)
    if gatt:
        if error.att_error is not None:
            return BleakGATTProtocolError(BleakGATTProtocolErrorCode(error.att_error))
        if error.dbus_error is not None and not (start_notify and error.dbus_error == "org.bluez.Error.NotSupported"):
            code = _GATT_CODES.get((error.dbus_error, error.detail)) or _GATT_CODES.get((error.dbus_error, None))
            if code is not None:
                return BleakGATTProtocolError(code)
    if start_notify and error.name == "not-supported" and error.dbus_error is None:
        # The gateway refuses a characteristic that neither notifies nor
        # indicates before asking BlueZ, whose StartNotify answers this.
        return BleakDBusError("org.bluez.Error.NotSupported", ["Operation is not supported"])
    if error.name == "timeout":
        return TimeoutError(error.detail)
    if error.name == "adapter-unavailable":
        return BleakBluetoothNotAvailableError(error.detail, BleakBluetoothNotAvailableReason.POWERED_OFF)
    if error.name == "bluetoothd-unavailable":
        return BleakBluetoothNotAvailableError(error.detail, BleakBluetoothNotAvailableReason.UNKNOWN)
    if error.dbus_error is not None:
        return BleakDBusError(error.dbus_error, [error.detail])
    return BleakGatewayError(error)
