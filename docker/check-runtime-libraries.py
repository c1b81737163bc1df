#!/usr/bin/env python3
"""Checks that the runtime stage of docker/Dockerfile provides every shared
library the gateway binary needs (the stage that installs Debian's runtime
packages; the final image then holds the files `ldd` names, copied from it).

The libraries the binary opens with dlopen (libmosquitto, for `--mqtt`) are
checked as well, with what they link: `ldd` of the binary does not list them.

Each library `ldd` resolves is mapped to its Debian package (`dpkg -S`); the
package must be one the runtime stage installs, one of their dependencies, or
one the slim base image has (Essential packages, apt, and their
dependencies). Prints the mapping; exits 1 when a library is not covered.

    docker/check-runtime-libraries.py BINARY [DOCKERFILE]
"""

import os
import re
import subprocess
import sys


def run(*command):
    return subprocess.run(command, capture_output=True, text=True, check=False).stdout


def needed_libraries(binary):
    libraries = []
    for line in run("ldd", binary).splitlines():
        line = line.strip()
        if "=>" in line:
            path = line.split("=>", 1)[1].strip().split(" ")[0]
            if path.startswith("/"):
                libraries.append(path)
        elif line.startswith("/"):
            libraries.append(line.split(" ")[0])  # the dynamic loader
    return libraries


# What the gateway opens with dlopen rather than links (Sources/CMosquitto):
# sonames, found where the dynamic loader would find them.
OPENED_AT_RUN_TIME = ["libmosquitto.so.1"]


def opened_libraries():
    libraries = []
    cache = run("ldconfig", "-p")
    for soname in OPENED_AT_RUN_TIME:
        path = next(
            (
                line.split("=>", 1)[1].strip()
                for line in cache.splitlines()
                if line.strip().startswith(soname + " ") and "=>" in line
            ),
            None,
        )
        if path is None:
            libraries.append(soname)  # not installed here: reported as missing
            continue
        libraries.append(path)
        libraries.extend(needed_libraries(path))
    return libraries


def package_of(path):
    # Debian 12 merges /lib into /usr/lib; dpkg records either spelling.
    candidates = {path, os.path.realpath(path)}
    for candidate in list(candidates):
        if candidate.startswith("/usr/"):
            candidates.add(candidate[len("/usr") :])
        else:
            candidates.add("/usr" + candidate)
    for candidate in candidates:
        output = run("dpkg", "-S", candidate)
        if output:
            return output.split(":")[0].split(",")[0].strip()
    return None


def runtime_packages(dockerfile):
    text = open(dockerfile).read().replace("\\\n", " ")
    stages = re.split(r"^FROM\s", text, flags=re.M)
    # The stage that installs the runtime packages: the last one with an
    # apt-get install (the final stage copies only the files it picked).
    runtime = next((stage for stage in reversed(stages) if "apt-get install" in stage), stages[-1])
    packages = set()
    for match in re.finditer(r"apt-get install ([^&;]*)", runtime):
        packages.update(word for word in match.group(1).split() if not word.startswith("-"))
    return packages


def dependency_closure(packages):
    if not packages:
        return set()
    output = run(
        "apt-cache",
        "depends",
        "--recurse",
        "--no-recommends",
        "--no-suggests",
        "--no-conflicts",
        "--no-breaks",
        "--no-replaces",
        "--no-enhances",
        *sorted(packages),
    )
    closure = set(packages)
    for line in output.splitlines():
        line = line.strip()
        if line.startswith(("Depends:", "PreDepends:")):
            name = line.split(":", 1)[1].strip().strip("<>")
            closure.add(name.split(":")[0])
        elif line and not line.startswith(("|", " ")) and ":" not in line:
            closure.add(line.strip("<>"))
    return closure


def base_image_packages():
    # debian:bookworm-slim is a minbase system: the Essential packages and apt.
    essential = {
        line.split()[0]
        for line in run("dpkg-query", "-W", "-f=${Package} ${Essential}\n").splitlines()
        if line.endswith(" yes")
    }
    return dependency_closure(essential | {"apt"})


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    binary = sys.argv[1]
    dockerfile = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "Dockerfile")
    installed = runtime_packages(dockerfile)
    provided = dependency_closure(installed) | base_image_packages()
    print(f"runtime stage installs: {' '.join(sorted(installed))}")
    missing = []
    for library in dict.fromkeys(needed_libraries(binary) + opened_libraries()):
        package = package_of(library)
        covered = package in provided
        reason = "installed" if package in installed else ("dependency or base image" if covered else "MISSING")
        print(f"  {library:55} {package or '?':20} {reason}")
        if not covered:
            missing.append((library, package))
    if missing:
        for library, package in missing:
            source = package or "no Debian package"
            print(f"FAIL: {library} comes from {source}, which the runtime stage does not provide")
        return 1
    print("ok: every library the binary needs is provided by the runtime stage")
    return 0


if __name__ == "__main__":
    sys.exit(main())
