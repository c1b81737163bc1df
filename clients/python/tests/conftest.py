"""The rig every test shares: a private bus, bluez-sim and the gateway.

The gateway's agent has a keyboard and display (so pairing asks for the
plug's passkey) and is not bluetoothd's default agent, so that an
encrypted read without pairing fails at once the same way for Bleak's own
backend and for the gateway (no agent to pair through).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
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


@pytest.fixture
def experimental_rig(tmp_path: Path) -> Iterator[Rig]:
    """A rig of the test's own whose simulated bluetoothd runs as with -E
    (its advertisement monitor manager, for passive scans)."""
    started = Rig(tmp_path, gateway_args=GATEWAY_ARGS, simulator_args=("--experimental",))
    try:
        yield started.start()
    finally:
        started.stop()


@pytest.fixture
def through_gateway() -> Iterator[Callable[..., None]]:
    """`blegateway.bleak.use` for one test: Bleak's own backend lookup is
    put back afterwards, so nothing else in the run goes through a gateway."""
    import bleak

    import blegateway.bleak

    names = (
        "get_platform_scanner_backend_type",
        "get_platform_client_backend_type",
        "get_platform_adapter_backend_type",
    )
    saved = {name: getattr(bleak, name) for name in names}
    try:
        yield blegateway.bleak.use
    finally:
        for name, value in saved.items():
            setattr(bleak, name, value)
        blegateway.bleak.config.configure(None)
