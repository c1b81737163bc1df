"""What the scripts ask of the simulated world (bluez-sim's control
interface, on the bus in SIM_BUS_ADDRESS): a peripheral notifying a value,
or dropping its link, as a real one would on its own."""

from __future__ import annotations

import os

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus


async def call(method: str, signature: str, *args: object, address: str | None = None) -> object:
    """Calls org.blegateway.Simulator1 on the bus at `address` (default SIM_BUS_ADDRESS); returns its answer."""
    bus = await MessageBus(bus_address=address or os.environ["SIM_BUS_ADDRESS"]).connect()
    try:
        reply = await bus.call(
            Message(
                destination="org.blegateway.Simulator",
                path="/org/blegateway/simulator",
                interface="org.blegateway.Simulator1",
                member=method,
                signature=signature,
                body=list(args),
            )
        )
    finally:
        bus.disconnect()
    assert reply is not None
    if reply.message_type == MessageType.ERROR:
        raise RuntimeError(f"{method}: {reply.error_name} {reply.body}")
    return reply.body[0] if reply.body else None


async def notify(address: str, characteristic: str, value: bytes) -> None:
    await call("SetValue", "ssay", address, characteristic, value)


async def drop_link(address: str) -> None:
    await call("DropConnection", "s", address)
