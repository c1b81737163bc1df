"""The Web Bluetooth script through a fleet: two gateways on one real
mosquitto, each over its own simulated bluetoothd. The heart-rate page is
loaded with `data-fleet` from g-a, which hears no strap; g-b hears it. The
page runs as it does on one gateway: the chooser lists the strap from the
fleet's events, and connect, the GATT database, reads, writes (an ATT error
included), descriptors, notifications and disconnect go through g-a's
/v1/fleet/ routes to g-b.
"""

from __future__ import annotations

import http.client
import os
import re
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from conftest import API_KEY, HERE, TIMEOUT, Gateway, PageServer, start_gateway
from test_webbluetooth import (
    STRAP,
    UART,
    UART_RX,
    choose,
    gateway_json,
    run_async,
    text,
    wait_for,
    write_the_control_point_and_disconnect,
)

# g-a's world: an adapter and a thermometer, no strap.
LONELY_SCENARIO = """
timing: 0.01
adapters:
  - id: hci0
    address: "00:1A:7D:DA:71:31"
devices:
  - address: "A4:C1:38:2F:1B:31"
    addressType: public
    name: Thermo 1B31
    rssi: -70
    advertising: { interval: 0.2, uuids: ["1809"] }
    services:
      - uuid: "1809"
        characteristics:
          - { uuid: "2a1c", flags: [indicate] }
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Broker:
    """A private mosquitto: its own config, log and port."""

    def __init__(self, work: Path) -> None:
        self.port = free_port()
        config = work / "mosquitto.conf"
        config.write_text(
            "per_listener_settings false\npersistence false\nallow_anonymous true\nset_tcp_nodelay true\n"
            + ("user root\n" if os.getuid() == 0 else "")
            + f"listener {self.port} 127.0.0.1\n"
        )
        self.log = work / "mosquitto.log"
        with self.log.open("wb") as sink:
            self.process = subprocess.Popen(["mosquitto", "-c", str(config)], stdout=sink, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        pytest.fail(f"mosquitto did not start: {self.log.read_text(errors='replace')}")

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


class HeldScan:
    """A scan held open on a gateway, so that it publishes what it hears on
    the broker (as a user's own scan, or `--mqtt-presence passive`, would)."""

    def __init__(self, gateway: Gateway) -> None:
        self.url = urlparse(gateway.url)
        self.stopping = threading.Event()
        self.connection: http.client.HTTPConnection | None = None
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                host = self.url.hostname or "127.0.0.1"
                self.connection = http.client.HTTPConnection(host, self.url.port, timeout=60)
                self.connection.request("GET", "/v1/scan", headers={"Authorization": f"Bearer {API_KEY}"})
                response = self.connection.getresponse()
                while not self.stopping.is_set() and response.readline():
                    pass
            except (OSError, http.client.HTTPException):
                self.stopping.wait(0.5)

    def stop(self) -> None:
        self.stopping.set()
        # Shut down, not closed under the reading thread: its read ends.
        if self.connection is not None and self.connection.sock is not None:
            self.connection.sock.shutdown(socket.SHUT_RDWR)
        self.thread.join(timeout=10)
        if self.connection is not None:
            self.connection.close()


@pytest.fixture(scope="module")
def fleet(pages: PageServer, scratch: Path) -> Iterator[tuple[Gateway, Gateway]]:
    work = scratch / "fleet"
    work.mkdir()
    broker = Broker(work)
    lonely = work / "g-a.yaml"
    lonely.write_text(LONELY_SCENARIO)
    gateways: list[Gateway] = []
    scan: HeldScan | None = None
    try:
        for name, scenario in (("g-a", lonely), ("g-b", HERE / "heart-rate-scenario.yaml")):
            gateways.append(
                start_gateway(
                    pages.origin, work, scenario, ("--mqtt", broker.url, "--gateway-id", name, "--mqtt-commands")
                )
            )
        a, b = gateways
        scan = HeldScan(b)
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            gateways_online = [g["id"] for g in gateway_json(a, "/v1/fleet/gateways") if g["online"]]
            if sorted(gateways_online) == ["g-a", "g-b"]:
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"the fleet did not come up: {gateway_json(a, '/v1/fleet/gateways')}")
        yield a, b
    finally:
        if scan is not None:
            scan.stop()
        for gateway in gateways:
            gateway.stop()
        broker.stop()


@pytest.mark.parametrize("browser", ["chromium", "webkit"], indirect=True)
def test_the_heart_rate_page_runs_through_a_gateway_that_does_not_hear_the_strap(
    browser: WebDriver, pages: PageServer, fleet: tuple[Gateway, Gateway], request: pytest.FixtureRequest
) -> None:
    a, b = fleet
    chromium_browser = request.node.callspec.params["browser"] == "chromium"
    browser.get(pages.page(a, fleet="1", **({"force": "1"} if chromium_browser else {})))

    browser.find_element(By.ID, "connect").click()
    wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, "dialog[open]"), "the chooser")
    assert "fleet" in browser.find_element(By.CSS_SELECTOR, "dialog[open] p").text
    choose(browser, STRAP)
    wait_for(browser, lambda d: text(d, "state") == "connected", "the connection")
    # g-b connected it; g-a never did.
    assert gateway_json(b, f"/v1/devices/{STRAP}")["connected"]
    assert STRAP not in [device["address"] for device in gateway_json(a, "/v1/devices")]
    assert text(browser, "device") == "Polar H10 6A3E01"
    assert text(browser, "location") == "Chest"
    assert re.fullmatch(r"\d{1,3} %", text(browser, "battery")), text(browser, "battery")
    wait_for(browser, lambda d: int(text(d, "count")) >= 3, "three heart-rate notifications through the fleet")

    write_the_control_point_and_disconnect(browser, b)


def test_descriptors_and_writes_without_response_go_through_the_fleet(
    browser: WebDriver, pages: PageServer, fleet: tuple[Gateway, Gateway]
) -> None:
    a, b = fleet
    browser.get(pages.page(a, fleet="1", force="1"))
    got = run_async(
        browser,
        f"""
        const picked = navigator.bluetooth.requestDevice({{
          filters: [{{services: ["heart_rate"]}}],
          optionalServices: ["{UART}"],
        }});
        const selector = 'dialog[open] button[data-address="{STRAP}"]';
        while (!document.querySelector(selector)) await new Promise((r) => setTimeout(r, 100));
        document.querySelector(selector).click();
        const device = await picked;
        window.fleetDevice = device;
        window.disconnections = 0;
        device.addEventListener("gattserverdisconnected", () => {{ window.disconnections += 1; }});
        const server = await device.gatt.connect();
        const rx = await (await server.getPrimaryService("{UART}")).getCharacteristic("{UART_RX}");
        const description = await rx.getDescriptor("gatt.characteristic_user_description");
        const text = new TextDecoder().decode(await description.readValue());
        const echoed = new Promise((resolve) => rx.addEventListener("characteristicvaluechanged",
          (event) => resolve(new TextDecoder().decode(event.target.value)), {{once: true}}));
        await rx.startNotifications();
        await rx.writeValueWithoutResponse(new TextEncoder().encode("via g-a"));
        const echo = await echoed;
        await rx.stopNotifications();
        return {{text, echo, connected: server.connected}};
        """,
    )
    assert got == {"text": "RX", "echo": "via g-a", "connected": True}, got

    # The link drops where the device is (another client of g-b disconnects
    # it): the page hears it from the fleet's events.
    disconnect = urllib.request.Request(
        f"{b.url}/v1/devices/{STRAP}/disconnect", method="POST", headers={"Authorization": f"Bearer {API_KEY}"}
    )
    urllib.request.urlopen(disconnect, timeout=TIMEOUT).close()
    wait_for(
        browser,
        lambda d: d.execute_script("return [window.fleetDevice.gatt.connected, window.disconnections]") == [False, 1],
        "gattserverdisconnected from the fleet's events",
    )
