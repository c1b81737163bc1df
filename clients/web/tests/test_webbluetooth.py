"""The Web Bluetooth script against a real gateway in real browsers: the
heart-rate page written for Chrome, with one script tag, in headless
Chromium (data-force) and in WebKitGTK (no Web Bluetooth of its own); the
chooser clicked as a user would; the spec's filters and errors; tabs
sharing a subscription; a gateway that goes away; and the files as served.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chromium.webdriver import ChromiumDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from conftest import API_KEY, PLAYGROUND, ROOT, TIMEOUT, Gateway, PageServer, start_gateway

STRAP = "C4:7C:8D:6A:3E:01"
THERMOMETER = "A4:C1:38:2F:1B:07"
UART = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
UART_RX = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"


def wait_for(driver: WebDriver, condition: Callable[[WebDriver], Any], what: str) -> Any:
    # The page re-renders the chooser's list and the log as devices and
    # lines come: an element found a moment ago may be gone when the driver
    # reads it (WebKitGTK's driver even says so from find_elements), which
    # is not the condition failing, so the wait asks again.
    try:
        return WebDriverWait(
            driver, TIMEOUT, poll_frequency=0.1, ignored_exceptions=(StaleElementReferenceException,)
        ).until(condition)
    except Exception as error:
        log = [line.text for line in driver.find_elements(By.CSS_SELECTOR, "#log li")]
        raise AssertionError(f"waiting for {what}; the page's log: {log}") from error


def text(driver: WebDriver, element_id: str) -> str:
    return str(driver.find_element(By.ID, element_id).text)


def log_lines(driver: WebDriver) -> list[str]:
    return [str(line.text) for line in driver.find_elements(By.CSS_SELECTOR, "#log li")]


def wait_for_log(driver: WebDriver, pattern: str) -> str:
    found: str = wait_for(
        driver,
        lambda d: next((line for line in log_lines(d) if re.search(pattern, line)), None),
        f"a log line /{pattern}/",
    )
    return found


def choose(driver: WebDriver, address: str) -> None:
    """Clicks the device's entry in the chooser once the scan lists it."""
    selector = f'dialog[open] button[data-address="{address}"]'
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, selector), f"{address} in the chooser")
    driver.find_element(By.CSS_SELECTOR, selector).click()


def run_async(driver: WebDriver, body: str) -> Any:
    """Runs `body` as an async function in the page; its result, or
    `{"error": name, "message": ...}` when it throws."""
    script = (
        "const done = arguments[arguments.length - 1];\n"
        f"(async () => {{ {body} }})().then(done, (e) => done({{error: e.name, message: String(e.message)}}));"
    )
    return driver.execute_async_script(script)


def browser_errors(driver: WebDriver) -> list[str]:
    # Chromium's log (a WebDriver extension that WebKitGTK lacks).
    entries: list[dict[str, Any]] = cast(ChromiumDriver, driver).get_log("browser")  # type: ignore[no-untyped-call]
    return [str(entry["message"]) for entry in entries if entry["level"] == "SEVERE"]


def gateway_json(gateway: Gateway, path: str) -> Any:
    request = urllib.request.Request(gateway.url + path, headers={"Authorization": f"Bearer {API_KEY}"})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        return json.load(response)


def write_the_control_point_and_disconnect(browser: WebDriver, holder: Gateway) -> None:
    """The heart-rate page's last steps: the control point takes 01 and
    refuses 02; then the page disconnects, and `holder` (the gateway that
    has the strap) lets it go."""
    browser.find_element(By.ID, "reset").click()
    wait_for_log(browser, r"Control point accepted 0x01")
    browser.find_element(By.ID, "bad-command").click()
    # The control point refuses 02 with ATT error 0x80 (an application
    # error): the spec's NotSupportedError.
    refused = wait_for_log(browser, r"Error: ")
    assert refused.startswith("NotSupportedError:") and "0x80 (peripheral-failed)" in refused, refused

    browser.find_element(By.ID, "disconnect").click()
    wait_for_log(browser, r"Polar H10 6A3E01 disconnected")
    assert text(browser, "state") == "disconnected"
    deadline = time.monotonic() + TIMEOUT
    while gateway_json(holder, f"/v1/devices/{STRAP}")["connected"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not gateway_json(holder, f"/v1/devices/{STRAP}")["connected"]


# The spec's outcomes, collected by one helper in the page.
OUTCOME = "const outcome = async (f) => { try { await f(); return 'resolved'; } catch (e) { return e.name; } };"


@pytest.mark.parametrize("browser", ["chromium", "webkit"], indirect=True)
def test_the_heart_rate_page_runs_with_one_script_tag(
    browser: WebDriver, pages: PageServer, gateway: Gateway, request: pytest.FixtureRequest
) -> None:
    chromium_browser = request.node.callspec.params["browser"] == "chromium"
    # Chromium has a navigator.bluetooth of its own (data-force replaces it);
    # WebKitGTK has none, so the script installs itself there unasked.
    browser.get(pages.page(gateway, **({"force": "1"} if chromium_browser else {})))
    installed = browser.execute_script(
        "return [blegateway.installed, navigator.bluetooth === blegateway.bluetooth, typeof BluetoothUUID.getService]"
    )
    assert installed == [True, True, "function"]

    browser.find_element(By.ID, "connect").click()
    dialog = wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, "dialog[open]"), "the chooser")
    assert dialog.get_attribute("aria-labelledby") and dialog.get_attribute("aria-describedby")
    choose(browser, STRAP)
    entry_gone = wait_for(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, "dialog"), "the chooser to close")
    assert entry_gone

    wait_for(browser, lambda d: text(d, "state") == "connected", "the connection")
    assert text(browser, "device") == "Polar H10 6A3E01"
    assert text(browser, "location") == "Chest"
    assert re.fullmatch(r"\d{1,3} %", text(browser, "battery")), text(browser, "battery")
    wait_for(browser, lambda d: int(text(d, "count")) >= 3, "three heart-rate notifications")
    assert 30 <= int(text(browser, "bpm")) <= 250, text(browser, "bpm")

    write_the_control_point_and_disconnect(browser, gateway)
    if chromium_browser:
        # Chromium logs the refused write's response (a 502 from the
        # gateway); nothing else went wrong.
        errors = browser_errors(browser)
        assert len(errors) == 1 and "/value?type=request" in errors[0] and "502" in errors[0], errors


@pytest.mark.parametrize("browser", ["chromium", "webkit"], indirect=True)
def test_cancelling_the_chooser_rejects_with_not_found(browser: WebDriver, pages: PageServer, gateway: Gateway) -> None:
    browser.get(pages.page(gateway, force="1"))
    browser.find_element(By.ID, "connect").click()
    choose_dialog = wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, "dialog[open]"), "the chooser")
    wait_for(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, f'dialog[open] button[data-address="{STRAP}"]'),
        "the strap in the chooser",
    )
    choose_dialog.find_element(By.XPATH, ".//button[text()='Cancel']").click()
    line = wait_for_log(browser, r"Error: ")
    assert line.startswith("NotFoundError: User cancelled"), line
    assert not browser.find_elements(By.CSS_SELECTOR, "dialog")

    # By keyboard: the focus starts in the dialog; Escape cancels it.
    browser.find_element(By.ID, "connect").click()
    wait_for(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, f'dialog[open] button[data-address="{STRAP}"]'),
        "the strap in the chooser",
    )
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait_for(
        browser,
        lambda d: len([x for x in log_lines(d) if x.startswith("NotFoundError")]) == 2,
        "a second NotFoundError",
    )


def test_the_chooser_lists_what_the_filters_match(browser: WebDriver, pages: PageServer, gateway: Gateway) -> None:
    browser.get(pages.page(gateway, force="1"))
    browser.execute_script("""
        window.picked = navigator.bluetooth.requestDevice({
          filters: [{namePrefix: 'Polar'},
                    {serviceData: [{service: 'health_thermometer',
                                    dataPrefix: Uint8Array.of(0xfe, 0x3a), mask: Uint8Array.of(0xff, 0x0f)}]}],
          exclusionFilters: [{manufacturerData: [{companyIdentifier: 0x006b, dataPrefix: Uint8Array.of(0x3f)}]}],
          optionalManufacturerData: [0x004c]});
        window.picked.catch(() => {});""")
    selector = f'dialog[open] button[data-address="{THERMOMETER}"]'
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, selector), "the thermometer in the chooser")
    shown_at = datetime.now(UTC)
    # Once the gateway has heard the strap again, its report has reached the
    # chooser's scan too: the exclusion filter must have kept it out.
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            seen = gateway_json(gateway, f"/v1/devices/{STRAP}").get("last_seen")
        except urllib.error.HTTPError as error:
            # With the tests' fast timing, BlueZ forgets an unseen device at once.
            assert error.code == 404
            seen = None
        if seen and datetime.fromisoformat(seen) > shown_at + timedelta(seconds=1):
            break
        time.sleep(0.2)
    entries = [
        e.get_attribute("data-address") for e in browser.find_elements(By.CSS_SELECTOR, "dialog button[data-address]")
    ]
    assert entries == [THERMOMETER]
    label = browser.find_element(By.CSS_SELECTOR, selector).get_attribute("aria-label") or ""
    assert re.fullmatch(r"Thermo 1B07, signal -\d+ dBm", label), label
    browser.find_element(By.CSS_SELECTOR, selector).click()
    device = run_async(browser, "const d = await window.picked; return [d.id, d.name, d.gatt.connected];")
    assert device == [THERMOMETER, "Thermo 1B07", False]
    advertised = run_async(
        browser,
        """
        const device = await window.picked;
        const stop = new AbortController();
        // The first report may come from BlueZ's cache, without a signal strength.
        const received = new Promise((resolve) => device.addEventListener('advertisementreceived', (event) => {
          if (Number.isInteger(event.rssi)) resolve(event);
        }));
        await device.watchAdvertisements({signal: stop.signal});
        const watching = device.watchingAdvertisements;
        const event = await received;
        stop.abort();
        return [watching, event.device === device, event.name, Number.isInteger(event.rssi),
                event.manufacturerData instanceof Map, device.watchingAdvertisements];""",
    )
    assert advertised == [True, True, "Thermo 1B07", True, True, False]
    # Chosen once, it is there for the next visit.
    browser.refresh()
    remembered = run_async(browser, "return (await navigator.bluetooth.getDevices()).map((d) => d.id);")
    assert THERMOMETER in remembered


@pytest.mark.parametrize("browser", ["chromium", "webkit"], indirect=True)
def test_bad_input_gets_the_spec_errors(browser: WebDriver, pages: PageServer, gateway: Gateway) -> None:
    browser.get(pages.page(gateway, force="1"))
    names = browser.execute_script("""
        const thrown = (f) => { try { f(); return 'returned'; } catch (e) { return e.name; } };
        return {
          name: BluetoothUUID.getCharacteristic('heart_rate_measurement'),
          alias: BluetoothUUID.canonicalUUID(0x180d),
          descriptor: BluetoothUUID.getDescriptor('gatt.client_characteristic_configuration'),
          unknown: thrown(() => BluetoothUUID.getService('heart_rat')),
          upperCase: thrown(() => BluetoothUUID.getService('0000180D-0000-1000-8000-00805F9B34FB')),
        };""")
    assert names == {
        "name": "00002a37-0000-1000-8000-00805f9b34fb",
        "alias": "0000180d-0000-1000-8000-00805f9b34fb",
        "descriptor": "00002902-0000-1000-8000-00805f9b34fb",
        "unknown": "TypeError",
        "upperCase": "TypeError",
    }
    refused = run_async(
        browser,
        OUTCOME
        + """
        const request = (options) => outcome(() => navigator.bluetooth.requestDevice(options));
        return [
          await request(),
          await request({}),
          await request({filters: []}),
          await request({filters: [{}]}),
          await request({filters: [{services: ['heart_rat']}]}),
          await request({filters: [{namePrefix: ''}]}),
          await request({filters: [{name: 'x'.repeat(249)}]}),
          await request({filters: [{services: ['heart_rate']}], acceptAllDevices: true}),
          await request({acceptAllDevices: true, exclusionFilters: [{name: 'x'}]}),
          await request({filters: [{manufacturerData: [
            {companyIdentifier: 1, dataPrefix: Uint8Array.of(1), mask: Uint8Array.of(1, 2)}]}]}),
          await request({filters: [{manufacturerData: [{companyIdentifier: 1}, {companyIdentifier: 1}]}]}),
          await request({acceptAllDevices: true, optionalServices: ['no_such_service']}),
        ];""",
    )
    assert refused == ["TypeError"] * 12
    assert not browser.find_elements(By.CSS_SELECTOR, "dialog"), "a refused request must not open the chooser"

    browser.execute_script(f"""
        window.picked = navigator.bluetooth.requestDevice({{
          filters: [{{services: ['heart_rate']}}], optionalServices: ['{UART}', 'battery_service']}});
        window.picked.catch(() => {{}});""")
    choose(browser, STRAP)
    outcomes = run_async(
        browser,
        OUTCOME
        + f"""
        const device = await window.picked;
        const server = await device.gatt.connect();
        const heartRate = await server.getPrimaryService('heart_rate');
        const rx = await (await server.getPrimaryService('{UART}')).getCharacteristic('{UART_RX}');
        const result = {{
          unknownName: await outcome(() => server.getPrimaryService('heart_rat')),
          notAllowed: await outcome(() => server.getPrimaryService('device_information')),
          missing: await outcome(() => heartRate.getCharacteristic('battery_level')),
          notReadable: await outcome(() => rx.readValue()),
          notABuffer: await outcome(() => rx.writeValueWithoutResponse('text')),
          overTheSpecLimit: await outcome(() => rx.writeValueWithoutResponse(new Uint8Array(513))),
          overTheMTU: await outcome(() => rx.writeValueWithoutResponse(new Uint8Array(100))),
          withinTheMTU: await outcome(() => rx.writeValueWithoutResponse(new Uint8Array(20))),
          cannotNotify: await outcome(async () =>
            (await heartRate.getCharacteristic('body_sensor_location')).startNotifications()),
          included: (await heartRate.getIncludedServices()).map((service) => service.uuid),
          includedOutOfReach: await outcome(() => heartRate.getIncludedService('device_information')),
          description: new TextDecoder().decode(
            await (await rx.getDescriptor('gatt.characteristic_user_description')).readValue()),
          cccWrite: await outcome(async () =>
            (await rx.getDescriptor('gatt.client_characteristic_configuration')).writeValue(Uint8Array.of(1, 0))),
          properties: Object.entries(rx.properties).filter(([, on]) => on).map(([name]) => name),
        }};
        // A read fires characteristicvaluechanged, which climbs the tree to
        // navigator.bluetooth with its target kept.
        const sensorLocation = await heartRate.getCharacteristic('body_sensor_location');
        const climbed = new Promise((resolve) => navigator.bluetooth.addEventListener(
          'characteristicvaluechanged', (event) => resolve(event.target === sensorLocation), {{once: true}}));
        await sensorLocation.readValue();
        result.bubbled = await climbed;
        device.gatt.disconnect();
        result.disconnected = await outcome(() => rx.writeValueWithoutResponse(new Uint8Array(1)));
        const again = await device.gatt.connect();
        result.staleAttribute = await outcome(() => rx.writeValueWithoutResponse(new Uint8Array(1)));
        result.sameService =
          (await again.getPrimaryService('heart_rate')) === (await again.getPrimaryService('heart_rate'));
        again.disconnect();
        return result;""",
    )
    assert outcomes == {
        "unknownName": "TypeError",
        "notAllowed": "SecurityError",
        "missing": "NotFoundError",
        "notReadable": "NotSupportedError",
        "notABuffer": "TypeError",
        "overTheSpecLimit": "InvalidModificationError",
        "overTheMTU": "InvalidModificationError",
        "withinTheMTU": "resolved",
        "cannotNotify": "NotSupportedError",
        "included": ["0000180f-0000-1000-8000-00805f9b34fb"],
        "includedOutOfReach": "SecurityError",
        "description": "RX",
        "cccWrite": "SecurityError",
        "properties": ["writeWithoutResponse", "notify"],
        "bubbled": True,
        "disconnected": "NetworkError",
        "staleAttribute": "InvalidStateError",
        "sameService": True,
    }


def test_a_refused_key_is_a_security_error_that_says_what_to_set(
    browser: WebDriver, pages: PageServer, gateway: Gateway
) -> None:
    browser.get(pages.page(gateway, force="1", key="not-the-key"))
    result = run_async(browser, "await navigator.bluetooth.requestDevice({acceptAllDevices: true});")
    assert result["error"] == "SecurityError", result
    assert "API key is not valid" in result["message"], result
    errors = browser_errors(browser)
    assert any("refused the API key" in error and "data-api-key" in error for error in errors), errors
    assert not browser.find_elements(By.CSS_SELECTOR, "dialog")


def test_a_page_from_an_origin_the_gateway_does_not_allow_is_told_about_cors_origin(
    browser: WebDriver, pages: PageServer, gateway: Gateway
) -> None:
    # localhost is another origin than the 127.0.0.1 the gateway allows.
    browser.get(pages.page(gateway, host="localhost", force="1"))
    result = run_async(browser, "await navigator.bluetooth.requestDevice({acceptAllDevices: true});")
    assert result["error"] == "SecurityError", result
    errors = browser_errors(browser)
    wanted = f"--cors-origin http://localhost:{pages.port}"
    assert any(wanted in error for error in errors), errors


def test_tabs_share_the_gateways_one_subscription(browser: WebDriver, pages: PageServer, gateway: Gateway) -> None:
    page = pages.page(gateway, force="1")
    tabs: list[str] = []
    for _ in range(2):
        if tabs:
            browser.switch_to.new_window("tab")
        browser.get(page)
        browser.find_element(By.ID, "connect").click()
        choose(browser, STRAP)
        wait_for(browser, lambda d: int(text(d, "count")) >= 2, "notifications")
        tabs.append(browser.current_window_handle)
    characteristic = gateway_json(gateway, f"/v1/devices/{STRAP}/characteristics/2a37")
    assert characteristic["notifying"] is True
    # The first tab goes; the second keeps receiving on the same subscription.
    browser.switch_to.window(tabs[0])
    browser.close()
    browser.switch_to.window(tabs[1])
    count = int(text(browser, "count"))
    wait_for(browser, lambda d: int(text(d, "count")) >= count + 3, "notifications after the other tab closed")
    assert text(browser, "state") == "connected"
    browser.find_element(By.ID, "disconnect").click()
    wait_for_log(browser, "disconnected")


def test_the_playground_the_gateway_serves_uses_the_consoles_key(browser: WebDriver, gateway: Gateway) -> None:
    # Served by the gateway itself: same origin, under its Content-Security-Policy,
    # with the key the web console keeps. The user gives the console the key,
    # then follows its link to the playground, as the README says.
    browser.get(gateway.url + "/")
    browser.find_element(By.ID, "api-key").send_keys(API_KEY)
    browser.find_element(By.CSS_SELECTOR, "#key-form button[type=submit]").click()
    wait_for(browser, lambda d: "version" in text(d, "gateway-status"), "the console with its key")
    # Reading the log empties it: the console's calls before it had the key
    # (401s) are not the playground's.
    browser_errors(browser)
    browser.find_element(By.LINK_TEXT, "Web Bluetooth playground").click()
    wait_for(browser, lambda d: d.find_elements(By.ID, "connect"), "the playground")
    browser.find_element(By.ID, "connect").click()
    choose(browser, STRAP)
    wait_for(browser, lambda d: int(text(d, "count")) >= 2, "notifications")
    assert text(browser, "location") == "Chest"
    browser.find_element(By.ID, "disconnect").click()
    wait_for_log(browser, r"Polar H10 6A3E01 disconnected")
    assert browser_errors(browser) == []


@pytest.mark.parametrize("browser", ["chromium", "webkit"], indirect=True)
def test_a_gateway_that_goes_away_disconnects_the_device(
    browser: WebDriver, pages: PageServer, scratch: Path, request: pytest.FixtureRequest
) -> None:
    own = start_gateway(pages.origin, scratch)
    try:
        browser.get(pages.page(own, force="1"))
        browser.find_element(By.ID, "connect").click()
        choose(browser, STRAP)
        wait_for(browser, lambda d: int(text(d, "count")) >= 2, "notifications")
        own.kill()
        wait_for_log(browser, r"Polar H10 6A3E01 disconnected")
        assert text(browser, "state") == "disconnected"
        if request.node.callspec.params["browser"] == "chromium":
            errors = browser_errors(browser)
            assert any("lost the connection to the gateway" in error for error in errors), errors
    finally:
        own.stop()


def test_the_module_build_installs_too(browser: WebDriver, pages: PageServer, gateway: Gateway) -> None:
    browser.get(pages.page(gateway, force="1", module="1"))
    installed = wait_for(
        browser,
        lambda d: d.execute_script("return window.blegateway && blegateway.installed"),
        "the module to install itself",
    )
    assert installed is True
    module = run_async(
        browser,
        f"""
        const imported = await import('{gateway.url}/webbluetooth.mjs');
        return [imported.bluetooth === navigator.bluetooth, imported.BluetoothUUID.getService('heart_rate'),
                blegateway.gateway];""",
    )
    assert module == [True, "0000180d-0000-1000-8000-00805f9b34fb", gateway.url + "/"]


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.mark.parametrize(
    ("path", "source", "content_type"),
    [
        ("/webbluetooth.js", "webbluetooth.js", "text/javascript; charset=utf-8"),
        ("/webbluetooth.mjs", "webbluetooth.mjs", "text/javascript; charset=utf-8"),
        ("/webbluetooth/playground.html", "playground.html", "text/html; charset=utf-8"),
    ],
)
def test_the_files_are_served_as_written_without_the_key(
    gateway: Gateway, path: str, source: str, content_type: str
) -> None:
    status, headers, body = fetch(gateway.url + path)
    assert status == 200
    assert headers["Content-Type"] == content_type
    assert body == (PLAYGROUND.parent / source).read_bytes(), (
        f"{path} differs from clients/web/{source}: run scripts/embed-webbluetooth.sh"
    )
    assert re.fullmatch(r'"[0-9a-f]{16}"', headers["ETag"]), headers
    assert "no-cache" in headers["Cache-Control"]
    status, headers_304, body = fetch(gateway.url + path, {"If-None-Match": headers["ETag"]})
    assert (status, body, headers_304["ETag"]) == (304, b"", headers["ETag"])
    assert fetch(gateway.url + "/v1/devices")[0] == 401


def test_the_classic_build_is_the_module_and_both_pass_the_linters() -> None:
    check = subprocess.run(
        ["bash", str(ROOT / "scripts" / "embed-webbluetooth.sh"), "--check"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stderr
    for name in ["webbluetooth.js", "webbluetooth.mjs"]:
        syntax = subprocess.run(
            ["node", "--check", str(PLAYGROUND.parent / name)], check=False, capture_output=True, text=True
        )
        assert syntax.returncode == 0, syntax.stderr
    eslint = shutil.which("eslint")
    assert eslint, "eslint (Debian package eslint) is missing"
    # Debian's eslint finds its modules under /usr/share/nodejs, which a
    # Node.js from elsewhere does not search by itself. ESLint 6 parses up
    # to ES2019 (no import.meta): it reads the classic build, the same code.
    lint = subprocess.run(
        [
            eslint,
            "--no-eslintrc",
            "-c",
            str(PLAYGROUND.parent / "eslintrc.json"),
            str(PLAYGROUND.parent / "webbluetooth.js"),
        ],
        check=False,
        capture_output=True,
        text=True,
        env={"NODE_PATH": "/usr/share/nodejs:/usr/lib/nodejs", "PATH": "/usr/bin:/bin"},
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
