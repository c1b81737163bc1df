"""A Bleak script as a user writes it for a local adapter, run through the
gateway (`blegateway.bleak.use`) against BlueZ's example peripheral on the
real bluetoothd: find it, connect, explore, read, an ATT error, pair (Just
Works, the gateway's agent), an encrypted read, unpair. Prints one line per
step, `PASS name (detail)` or `FAIL name (why)`, as Tests/e2e/api-checks.sh
does; exits 1 when a step failed.

    python3 Tests/e2e/bleak-check.py GATEWAY-URL ADDRESS
"""

import asyncio
import sys

from bleak import BleakClient, BleakScanner
from bleak.exc import BleakGATTProtocolError

import blegateway.bleak

TEST_CHAR = "12345678-1234-5678-1234-56789abcdef1"
ENCRYPTED = "12345678-1234-5678-1234-56789abcdef3"

failures = 0


def step(name: str, ok: bool, detail: str) -> None:
    global failures
    if not ok:
        failures += 1
    print(f"{'PASS' if ok else 'FAIL'} bleak-{name} ({detail})", flush=True)


async def main(address: str) -> None:
    device = await BleakScanner.find_device_by_address(address, timeout=30)
    step("find", device is not None, f"{device.name if device else 'not found in 30 s'}")
    if device is None:
        return
    async with BleakClient(device, timeout=30) as client:
        services = [service.uuid for service in client.services]
        step("services", "0000180d-0000-1000-8000-00805f9b34fb" in services, f"{len(services)} services")
        location = await client.read_gatt_char("2a38")
        step("read", location == b"\x01", f"2a38 = {location.hex()}")
        await client.write_gatt_char(TEST_CHAR, b"\xbe\xef", response=True)
        back = await client.read_gatt_char(TEST_CHAR)
        step("write", back == b"\xbe\xef", f"wrote beef, read {back.hex()}")
        try:
            await client.write_gatt_char("2a39", b"\x02", response=True)
            step("att-error", False, "the control point accepted 02")
        except BleakGATTProtocolError as error:
            step("att-error", int(error.code) == 0x80, str(error))
        await client.pair()
        secret = await client.read_gatt_char(ENCRYPTED)
        step("pair", True, f"paired; the encrypted characteristic reads {secret.hex()}")
        await client.unpair()
        step("unpair", True, "unpaired")
    step("disconnect", not client.is_connected, "disconnected")


if __name__ == "__main__":
    blegateway.bleak.use(sys.argv[1])
    try:
        asyncio.run(asyncio.wait_for(main(sys.argv[2]), 180))
    except Exception as error:  # a step that raised: say which, as a FAIL line
        step("script", False, f"{type(error).__name__}: {error}")
    sys.exit(1 if failures else 0)
