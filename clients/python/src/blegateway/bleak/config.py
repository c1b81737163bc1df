"""Which gateway the Bleak backend talks to, and who answers pairing questions."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from ..fleet import Fleet
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
    fleet: bool = False
    """Reach every device of the fleet the gateway at `url` is in, through
    its `/v1/fleet/` routes, rather than the devices of that gateway only."""

    def gateway(self, **options: Any) -> Gateway:
        if self.fleet:
            return Fleet(self.url, self.api_key, **options)
        return Gateway(self.url, self.api_key, **options)


def fleet_from_environment() -> bool:
    """BLEGATEWAY_FLEET=1 (or true, yes): through the fleet."""
    return os.environ.get("BLEGATEWAY_FLEET", "").strip().lower() in ("1", "true", "yes")


_current: GatewayConfig | None = None


def configure(config: GatewayConfig | None) -> None:
    global _current
    _current = config


def current(url: str | None = None, api_key: str | None = None, fleet: bool | None = None) -> GatewayConfig:
    """The gateway named by the arguments, else by `use()`, else by
    BLEGATEWAY_URL, BLEGATEWAY_API_KEY and BLEGATEWAY_FLEET; `fleet`, when
    given, says whether to go through the fleet whatever those say."""
    config = _named(url, api_key)
    if fleet is not None and fleet != config.fleet:
        return replace(config, fleet=fleet)
    return config


def _named(url: str | None, api_key: str | None) -> GatewayConfig:
    if url is not None:
        pairing = _current.pairing if _current is not None else None
        key = api_key if api_key is not None else os.environ.get("BLEGATEWAY_API_KEY")
        return GatewayConfig(url, key, pairing, fleet_from_environment())
    if _current is not None:
        return _current
    env_url = os.environ.get("BLEGATEWAY_URL")
    if not env_url:
        raise ValueError(
            "no gateway to talk to: call blegateway.bleak.use(URL), or set BLEGATEWAY_URL (e.g. http://127.0.0.1:8080)"
        )
    return GatewayConfig(env_url, os.environ.get("BLEGATEWAY_API_KEY"), fleet=fleet_from_environment())
