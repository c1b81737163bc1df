"""Which gateway the Bleak backend talks to, and who answers pairing questions."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..gateway import Gateway
from ..models import PairingRequest

PairingAnswer = int | str | bool | None
PairingCallback = Callable[[PairingRequest], PairingAnswer | Awaitable[PairingAnswer]]
"""Called with each question of the gateway's pairing agent about the
device being paired: return the passkey (an int, `passkey`), the PIN (a
str, `pin-code`), or True or False (`confirmation`, `authorization`,
`service-authorization`). `display-passkey` and `display-pin-code` only
tell what to type on the device; their answer is ignored. May be a
coroutine function."""


@dataclass(frozen=True)
class GatewayConfig:
    url: str
    api_key: str | None = None
    pairing: PairingCallback | None = None

    def gateway(self, **options: Any) -> Gateway:
        return Gateway(self.url, self.api_key, **options)


_current: GatewayConfig | None = None


def configure(config: GatewayConfig | None) -> None:
    global _current
    _current = config


def current(url: str | None = None, api_key: str | None = None) -> GatewayConfig:
    """The gateway named by the arguments, else by `use()`, else by
    BLEGATEWAY_URL and BLEGATEWAY_API_KEY."""
    if url is not None:
        pairing = _current.pairing if _current is not None else None
        return GatewayConfig(url, api_key if api_key is not None else os.environ.get("BLEGATEWAY_API_KEY"), pairing)
    if _current is not None:
        return _current
    env_url = os.environ.get("BLEGATEWAY_URL")
    if not env_url:
        raise ValueError(
            "no gateway to talk to: call blegateway.bleak.use(URL), or set BLEGATEWAY_URL (e.g. http://127.0.0.1:8080)"
        )
    return GatewayConfig(env_url, os.environ.get("BLEGATEWAY_API_KEY"))
