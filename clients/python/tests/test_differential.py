"""The same Bleak scripts on Bleak's own BlueZ backend and through the
gateway, against one simulated bluetoothd: the results must be equal,
field by field.

Each script runs as a user runs it: `python script.py` on the private bus
(DBUS_SYSTEM_BUS_ADDRESS), and unchanged through
`python -m blegateway.bleak --gateway URL script.py`, without access to
the bus.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from rig import Rig

SCRIPTS = Path(__file__).resolve().parent / "scripts"
HEART_RATE = "C4:7C:8D:6A:3E:01"
PLUG = "D0:73:D5:22:41:9C"


def run(rig: Rig, script: str, *args: str, through_gateway: bool) -> Any:
    environment = rig.environment()
    if through_gateway:
        del environment["DBUS_SYSTEM_BUS_ADDRESS"]
        command = [sys.executable, "-m", "blegateway.bleak", "--gateway", rig.url, script, *args]
    else:
        command = [sys.executable, script, *args]
    done = subprocess.run(command, cwd=SCRIPTS, env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stderr}"
    return json.loads(done.stdout)


def differences(native: Any, gateway: Any, path: str = "") -> list[str]:
    """Every field where the two results differ, by its path."""
    if isinstance(native, dict) and isinstance(gateway, dict):
        found = []
        for key in sorted(set(native) | set(gateway)):
            if key not in native or key not in gateway:
                found.append(f"{path}/{key}: only in {'native' if key in native else 'gateway'}")
            else:
                found += differences(native[key], gateway[key], f"{path}/{key}")
        return found
    if isinstance(native, list) and isinstance(gateway, list) and len(native) == len(gateway):
        pairs = enumerate(zip(native, gateway, strict=True))
        return [d for i, (n, g) in pairs for d in differences(n, g, f"{path}[{i}]")]
    return [] if native == gateway else [f"{path}: native {native!r}, gateway {gateway!r}"]


def compare(rig: Rig, script: str, *args: str) -> Any:
    native = run(rig, script, *args, through_gateway=False)
    gateway = run(rig, script, *args, through_gateway=True)
    assert differences(native, gateway) == []
    return gateway


def test_scanning(rig: Rig) -> None:
    result = compare(rig, "scan.py")
    assert [d["address"] for d in result["by_service"]] == [HEART_RATE]
    strap = result["by_service"][0]
    assert strap["local_name"] == "Polar H10 6A3E01"
    assert strap["manufacturer_data"] == {"107": "3f00"}
    assert (strap["tx_power"], strap["rssi"]) == (4, -58)
    everything = {d["address"]: d for d in result["everything"]}
    assert everything["A4:C1:38:8E:2F:55"]["service_data"] == {
        "0000fcd2-0000-1000-8000-00805f9b34fb": "40016102c40903bf13"
    }
    assert result["by_name"] == [PLUG, "Smart Plug 419C", True]
    assert result["missing"] is None
    assert result["callback"] == [HEART_RATE]


def test_exploring_every_service(rig: Rig) -> None:
    result = compare(rig, "explore.py", HEART_RATE, PLUG)
    strap = result[HEART_RATE]
    assert strap["name"] == "Polar H10 6A3E01"
    heart_rate = next(s for s in strap["services"] if s["uuid"].startswith("0000180d"))
    location = next(c for c in heart_rate["characteristics"] if c["uuid"].startswith("00002a38"))
    assert location["value"] == "01"
    measurement = next(c for c in heart_rate["characteristics"] if c["uuid"].startswith("00002a37"))
    assert measurement["descriptors"][0][0] == "00002902-0000-1000-8000-00805f9b34fb"
    schedule = next(
        c for s in result[PLUG]["services"] for c in s["characteristics"] if c["uuid"].startswith("0000ff03")
    )
    assert "error" in schedule or schedule.get("value") == "0000"


def test_reads_writes_errors_notifications_and_disconnections(rig: Rig) -> None:
    result = compare(rig, "gatt.py")
    assert result["location"] == "01"
    assert result["connected_devices"] == [[HEART_RATE, "Polar H10 6A3E01"]]
    assert result["att_error"][1] == 0x80
    assert result["all_notified"] is True
    assert result["notifications"] == [f"00{60 + i:02x}" for i in range(20)]
    assert result["after_stop"] == []
    assert result["echo"] == "01"
    assert result["user_description"] == "Relay"
    assert result["dropped"] == [True, False]
    assert result["disconnections"] == [HEART_RATE, "plug"]


def test_differences_name_each_field() -> None:
    """The comparison sees a difference (so it can fail), and says where."""
    native = {"a": [{"handle": 8}, {"handle": 12}], "b": "x"}
    gateway = {"a": [{"handle": 8}, {"handle": 13}], "c": "x"}
    assert differences(native, gateway) == [
        "/a[1]/handle: native 12, gateway 13",
        "/b: only in native",
        "/c: only in gateway",
    ]
