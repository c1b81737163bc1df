"""What goes wrong talking to a gateway, as exceptions."""

from __future__ import annotations

from typing import Any

import httpx


class GatewayError(Exception):
    """Base class of everything `blegateway` raises about a gateway."""


class GatewayUnreachable(GatewayError):
    """The gateway did not answer: nothing listens at its URL, the network
    is down, or the connection broke before a response came."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"blegateway at {url} is unreachable: {reason}")
        self.url = url
        self.reason = reason


class GatewayProblem(GatewayError):
    """An RFC 9457 problem the gateway answered with.

    `type`, `title`, `status` and `detail` are always there; `dbus_error` is
    the BlueZ or D-Bus error name behind it and `att_error` the ATT error
    code the peripheral answered with, where there was one.
    """

    def __init__(self, document: dict[str, Any]) -> None:
        self.type: str = str(document.get("type", "about:blank"))
        self.title: str = str(document.get("title", ""))
        self.status: int = int(document.get("status", 0))
        self.detail: str = str(document.get("detail", self.title))
        self.instance: str | None = _optional_str(document.get("instance"))
        self.dbus_error: str | None = _optional_str(document.get("dbus_error"))
        att_error = document.get("att_error")
        self.att_error: int | None = att_error if isinstance(att_error, int) else None
        self.request_id: str | None = _optional_str(document.get("request_id"))
        self.document = document
        super().__init__(f"{self.status} {self.name}: {self.detail}")

    @property
    def name(self) -> str:
        """The problem type's last part (`not-connected`, `peripheral-failed`, ...)."""
        return self.type.rsplit(":", 1)[-1]


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def problem_from_response(response: httpx.Response) -> GatewayProblem:
    """The problem an error response carries (or one made from its status,
    for a response that is not problem JSON, such as a proxy's)."""
    try:
        document = response.json()
    except ValueError:
        document = None
    if not isinstance(document, dict) or "status" not in document:
        document = {
            "type": "about:blank",
            "title": response.reason_phrase,
            "status": response.status_code,
            "detail": response.text[:200] or response.reason_phrase,
        }
    return GatewayProblem(document)
