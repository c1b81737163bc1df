"""The rig every test shares: a private bus, bluez-sim and the gateway.

The gateway's agent has a keyboard and display (so pairing asks for the
plug's passkey) and is not bluetoothd's default agent, so that an
encrypted read without pairing fails at once the same way for Bleak's own
backend and for the gateway (no agent to pair through).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rig import Rig

GATEWAY_ARGS = ("--agent-capability", "KeyboardDisplay", "--no-default-agent")


@pytest.fixture(scope="session")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    started = Rig(tmp_path_factory.mktemp("rig"), gateway_args=GATEWAY_ARGS)
    try:
        yield started.start()
    finally:
        started.stop()


@pytest.fixture
def own_rig(tmp_path: Path) -> Iterator[Rig]:
    """A rig of the test's own, for tests that stop or restart its parts."""
    started = Rig(tmp_path, gateway_args=GATEWAY_ARGS)
    try:
        yield started.start()
    finally:
        started.stop()
