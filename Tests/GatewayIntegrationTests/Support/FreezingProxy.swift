import Foundation
import Glibc
import TestSupport

/// A TCP proxy in front of the broker that a test freezes: everything is
/// then dropped both ways while the sockets stay open, as when a network
/// path dies without a reset. Python's asyncio, run as a child process.
struct FreezingProxy {
    let process: ChildProcess
    let port: Int

    static func start(to target: Int) async throws -> FreezingProxy {
        let port = try freePort()
        let process = try ChildProcess(["python3", "-c", script, String(port), String(target)])
        guard await process.waitForOutput(containing: "ready", timeout: .seconds(20)) else {
            throw ProxyError(description: "the proxy did not start: \(process.standardError)")
        }
        return FreezingProxy(process: process, port: port)
    }

    var url: String { "mqtt://127.0.0.1:\(port)" }

    func freeze() { process.signal(SIGUSR1) }
    func thaw() { process.signal(SIGUSR2) }

    struct ProxyError: Error, CustomStringConvertible {
        let description: String
    }

    static let script = #"""
# Freezes on SIGUSR1 (drops everything, sockets open), thaws on SIGUSR2.
# Arguments: listen port, target port.

import asyncio
import signal
import sys

frozen = False


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            if not frozen:
                writer.write(data)
                await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def main(listen: int, target: int) -> None:
    def freeze(state: bool) -> None:
        global frozen
        frozen = state

    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, freeze, True)
    loop.add_signal_handler(signal.SIGUSR2, freeze, False)

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if frozen:
            writer.close()
            return
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", target)
        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

    server = await asyncio.start_server(accept, "127.0.0.1", listen)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
"""#
}
