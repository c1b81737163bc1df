"""A private mosquitto for one test: its own directory, config and port."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from rig import free_port, wait_for


class Broker:
    def __init__(self, work: Path) -> None:
        self.work = work
        self.port = free_port()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> Broker:
        lines = [
            "per_listener_settings false",
            "log_dest stderr",
            "persistence false",
            "allow_anonymous true",
            # Forwarded requests are small messages: without it each waits
            # for Nagle's delay (docs/fleet.md, "Cost and limits").
            "set_tcp_nodelay true",
            *(["user root"] if os.getuid() == 0 else []),
            f"listener {self.port} 127.0.0.1",
        ]
        config = self.work / "mosquitto.conf"
        config.write_text("\n".join(lines) + "\n")
        log_path = self.work / "mosquitto.log"
        with log_path.open("wb") as log:
            self._process = subprocess.Popen(["mosquitto", "-c", str(config)], stdout=log, stderr=subprocess.STDOUT)
        wait_for(lambda: f"port {self.port}" in log_path.read_text(errors="replace"), "mosquitto listening")
        return self

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
