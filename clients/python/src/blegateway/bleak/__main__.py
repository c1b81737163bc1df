"""`python -m blegateway.bleak --gateway URL [--fleet] script.py ARGS`: runs
a Bleak script unchanged, with Bleak going through the gateway (or, with
`--fleet`, through the fleet the gateway is in)."""

from __future__ import annotations

import argparse
import os
import runpy
import sys

from . import use
from .config import fleet_from_environment


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m blegateway.bleak",
        description="Run a Bleak script with BleakScanner and BleakClient going through a blegateway.",
    )
    parser.add_argument(
        "--gateway",
        default=os.environ.get("BLEGATEWAY_URL"),
        metavar="URL",
        help="the gateway (default: $BLEGATEWAY_URL), e.g. http://127.0.0.1:8080",
    )
    parser.add_argument(
        "--api-key",
        default=os.environ.get("BLEGATEWAY_API_KEY"),
        metavar="KEY",
        help="the gateway's API key (default: $BLEGATEWAY_API_KEY)",
    )
    parser.add_argument(
        "--fleet",
        action="store_true",
        default=fleet_from_environment(),
        help="through the gateway's fleet: every device any gateway of the fleet hears (default: $BLEGATEWAY_FLEET)",
    )
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    options = parser.parse_args(argv)
    if not options.gateway:
        parser.error("no gateway: give --gateway URL or set BLEGATEWAY_URL")
    use(options.gateway, options.api_key, fleet=options.fleet)
    sys.argv = [options.script, *options.args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(options.script)))
    runpy.run_path(options.script, run_name="__main__")


if __name__ == "__main__":
    main()
