import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayVersion

/// `blegateway`: a Bluetooth Low Energy central on the network.
@main
struct BLEGateway: AsyncParsableCommand {
    static let version = GatewayVersion.string

    static let configuration = CommandConfiguration(
        commandName: "blegateway",
        abstract: "Bluetooth Low Energy central over HTTP: REST and Server-Sent Events in front of BlueZ.",
        discussion: """
            Run `blegateway serve --simulate` for a demo without Bluetooth hardware (a built-in \
            BlueZ simulator on a private bus), or `blegateway serve` beside bluetoothd.

            The other commands are clients of a running gateway (--url, or BLEGATEWAY_URL; \
            default http://127.0.0.1:8080), as bluetoothctl is of bluetoothd:
              blegateway scan --service 180d           blegateway connect C4:7C:8D:6A:3E:01
              blegateway gatt C4:7C:8D:6A:3E:01         blegateway read C4:7C:8D:6A:3E:01 2a38
              blegateway notify C4:7C:8D:6A:3E:01 2a37  blegateway events --type device-connected

            They are a program of their own, blegateway-client, installed beside blegateway, \
            which hands them over (`blegateway scan --help` for each): \
            \(ClientHandOver.commands.sorted().joined(separator: ", ")).
            """,
        version: version,
        subcommands: [
            ServeCommand.self, HealthCommand.self,
        ])

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // The client commands run in their own executable, so that the
        // server maps neither Foundation's networking (libcurl) nor ICU.
        if ClientHandOver.handles(arguments) { ClientHandOver.execute(arguments) }
        let prepared = withEnvironment(SimulateArgument.normalized(arguments))
        if let serve = parsedServe(prepared) {
            do {
                try await serve.run()
            } catch {
                Self.exit(withError: error)
            }
            Self.exit()
        }
        await Self.main(prepared)
    }

    /// `serve` and its options, when they parse as `serve` alone: the
    /// gateway's start then skips swift-argument-parser's walk from the
    /// root, which builds `serve`'s options twice more (about 0.7 ms of a
    /// start; BENCHMARKS.md). Anything else (help, a mistake, another
    /// command) is nil and goes the usual way, which answers exactly as it
    /// always did.
    private static func parsedServe(_ arguments: [String]) -> ServeCommand? {
        guard arguments.first == ServeCommand.configuration.commandName else { return nil }
        return (try? ServeCommand.parseAsRoot(Array(arguments.dropFirst()))) as? ServeCommand
    }

    /// `serve`'s environment variables (`BLEGATEWAY_LISTEN`, …) given to
    /// the parser as options, before the command line's (which win).
    private static func withEnvironment(_ arguments: [String]) -> [String] {
        guard arguments.first == ServeCommand.configuration.commandName else { return arguments }
        let environment = ProcessInfo.processInfo.environment
        return [arguments[0]] + ServeOption.environmentArguments(Array(arguments.dropFirst()), environment: environment)
    }
}

/// `--simulate` takes an optional scenario file, which argument parsers do
/// not model: `--simulate` alone becomes `--simulate=builtin`, and
/// `--simulate FILE` becomes `--simulate=FILE`.
enum SimulateArgument {
    static let builtIn = "builtin"

    static func normalized(_ arguments: [String]) -> [String] {
        var result: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--simulate" {
                let next = index + 1 < arguments.count ? arguments[index + 1] : nil
                if let next, !next.hasPrefix("-") {
                    result.append("--simulate=\(next)")
                    index += 2
                    continue
                }
                result.append("--simulate=\(builtIn)")
            } else {
                result.append(argument)
            }
            index += 1
        }
        return result
    }
}
