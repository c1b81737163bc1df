"""Generates a Python client from openapi-3.1.yaml with each generator that
runs here and checks that none dropped an operation.

    check_generated_clients.py SPEC WORKDIR

Generators: openapi-python-client (`generate --meta none`) and OpenAPI
Generator (`openapi-generator-cli generate -g python`, the jar in its PyPI
wheel run by the system's java), both with their spec validation on. The
operations of a generated client are read from its code (the method and
path template each request function uses) and compared with the spec's.
Prints a JSON summary; exits non-zero when a generator fails or drops an
operation.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}


def spec_operations(spec: Path) -> set[str]:
    document = yaml.safe_load(spec.read_text(encoding="utf-8"))
    return {
        f"{method.upper()} {path}" for path, item in document["paths"].items() for method in item if method in METHODS
    }


def generated(pattern: str, directory: Path) -> set[str]:
    found: set[str] = set()
    for source in directory.rglob("*.py"):
        for method, path in re.findall(pattern, source.read_text(encoding="utf-8"), flags=re.DOTALL):
            found.add(f"{method.upper()} {path}")
    return found


def run(command: list[str]) -> tuple[int, str]:
    result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=900)
    return result.returncode, result.stdout + result.stderr


def main() -> int:
    spec, work = Path(sys.argv[1]), Path(sys.argv[2])
    expected = spec_operations(spec)
    report: dict[str, object] = {"operations": len(expected)}
    failed = False
    # Each generator: its command (given its output directory) and the
    # pattern of (method, path template) in the request code it writes.
    generators = {
        "openapi-python-client": (
            lambda out: [
                "openapi-python-client",
                "generate",
                "--path",
                str(spec),
                "--output-path",
                str(out),
                "--meta",
                "none",
            ],
            r'"method":\s*"(\w+)",\s*"url":\s*"([^"]+)"',
        ),
        "openapi-generator": (
            lambda out: [
                "openapi-generator-cli",
                "generate",
                "-i",
                str(spec),
                "-g",
                "python",
                "-o",
                str(out),
                "--package-name",
                "blegateway_client",
                "--global-property",
                "apiTests=false,modelTests=false,apiDocs=false,modelDocs=false",
            ],
            r"method='(\w+)',\s*resource_path='([^']+)'",
        ),
    }
    for name, (command, pattern) in generators.items():
        out = work / name
        status, log = run(command(out))
        operations = generated(pattern, out) if status == 0 else set()
        dropped = sorted(expected - operations)
        report[name] = {
            "status": status,
            "operations": len(operations),
            "dropped": dropped,
        }
        # openapi-python-client says what it skipped and still exits 0.
        if status != 0 or dropped or "will not be generated" in log:
            failed = True
            print(log[-6000:], file=sys.stderr)

    json.dump(report, sys.stdout)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
