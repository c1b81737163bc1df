"""Fixtures of the Web Bluetooth tests: a real gateway on its simulator
(`blegateway serve --simulate heart-rate-scenario.yaml`, with an API key and
the test pages' origin allowed), a web server for those pages on another
origin, and real browsers: headless Chromium and WebKitGTK (MiniBrowser,
which has no Web Bluetooth of its own, under Xvfb).

    BLEGATEWAY=.build/debug/blegateway xvfb-run -a python3 -m pytest clients/web/tests
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service as ChromeService
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.webkitgtk.options import Options as WebKitGTKOptions
from selenium.webdriver.webkitgtk.service import Service as WebKitGTKService

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
PLAYGROUND = HERE.parent / "playground.html"
SCENARIO = HERE / "heart-rate-scenario.yaml"
API_KEY = "web-bluetooth-test-key"
# Generous: the machine running the tests may be loaded.
TIMEOUT = 60.0
MINIBROWSER = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser"


@dataclass
class Gateway:
    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()


def start_gateway(cors_origin: str, directory: Path, scenario: Path = SCENARIO, extra: tuple[str, ...] = ()) -> Gateway:
    """Starts the gateway on a free port; returns once it listens."""
    binary = os.environ.get("BLEGATEWAY", str(ROOT / ".build" / "debug" / "blegateway"))
    if not Path(binary).is_file():
        pytest.fail(f"no gateway binary at {binary} (swift build, or set BLEGATEWAY)")
    log = Path(tempfile.mkstemp(prefix="gateway-", suffix=".log", dir=directory)[1])
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [
                binary,
                "serve",
                "--simulate",
                str(scenario),
                "--listen",
                "127.0.0.1:0",
                "--api-key",
                API_KEY,
                "--cors-origin",
                cors_origin,
                *extra,
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)\b", log.read_text(errors="replace"))
        if found:
            return Gateway(process, found.group(1), log)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    pytest.fail(f"the gateway did not start:\n{log.read_text(errors='replace')[-3000:]}")


class PageServer:
    """Serves the playground as a page from elsewhere would load it:
    `/heart-rate.html?gateway=URL[&force=1][&module=1][&fleet=1][&key=KEY]`,
    its one script tag pointing at the gateway."""

    def __init__(self) -> None:
        playground = PLAYGROUND.read_text()
        tag = '<script src="/webbluetooth.js" data-force></script>'
        assert tag in playground, "the playground's script tag changed: update the test page server"

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urlparse(self.path)
                if url.path == "/favicon.ico":
                    self.send_response(204)
                    self.end_headers()
                    return
                query = {name: values[0] for name, values in parse_qs(url.query).items()}
                if url.path != "/heart-rate.html" or "gateway" not in query:
                    self.send_error(404)
                    return
                gateway = query["gateway"]
                attributes = f' data-api-key="{query.get("key", API_KEY)}"'
                if query.get("force") == "1":
                    attributes += " data-force"
                if query.get("fleet") == "1":
                    attributes += " data-fleet"
                if query.get("module") == "1":
                    script = f'<script type="module" src="{gateway}/webbluetooth.mjs"{attributes}></script>'
                else:
                    script = f'<script src="{gateway}/webbluetooth.js"{attributes}></script>'
                body = playground.replace(tag, script).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def page(self, gateway: Gateway, *, host: str = "127.0.0.1", **options: str) -> str:
        query = "&".join(f"{name}={value}" for name, value in {"gateway": gateway.url, **options}.items())
        return f"http://{host}:{self.port}/heart-rate.html?{query}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="session")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="webbluetooth-tests-") as directory:
        yield Path(directory)


@pytest.fixture(scope="session")
def pages() -> Iterator[PageServer]:
    server = PageServer()
    yield server
    server.close()


@pytest.fixture(scope="session")
def gateway(pages: PageServer, scratch: Path) -> Iterator[Gateway]:
    running = start_gateway(pages.origin, scratch)
    yield running
    running.stop()


def chromium() -> WebDriver:
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1200,1000",
        "--no-first-run",
        "--disable-extensions",
    ]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=ChromeService(executable_path="/usr/bin/chromedriver"), options=options)


def webkit() -> WebDriver:
    if not os.environ.get("DISPLAY"):
        pytest.fail("WebKitGTK needs a display: run the tests under xvfb-run -a")
    options = WebKitGTKOptions()
    options.binary_location = MINIBROWSER
    options.add_argument("--automation")
    return webdriver.WebKitGTK(service=WebKitGTKService(executable_path="/usr/bin/WebKitWebDriver"), options=options)


BROWSERS = {"chromium": chromium, "webkit": webkit}


@pytest.fixture
def browser(request: pytest.FixtureRequest) -> Iterator[WebDriver]:
    name = getattr(request, "param", "chromium")
    driver = BROWSERS[name]()
    driver.set_script_timeout(TIMEOUT)
    yield driver
    driver.quit()
