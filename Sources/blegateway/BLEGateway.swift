import ArgumentParser

/// `blegateway`: a Bluetooth Low Energy central on the network.
@main
struct BLEGateway: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "blegateway",
        abstract: "Bluetooth Low Energy central over HTTP: REST and Server-Sent Events in front of BlueZ.",
        discussion: """
            Run `blegateway serve --simulate` for a demo without Bluetooth hardware (a built-in \
            BlueZ simulator on a private bus), or `blegateway serve` beside bluetoothd.
            """,
        version: version,
        subcommands: [ServeCommand.self, HealthCommand.self])

    static func main() async {
        await Self.main(SimulateArgument.normalized(Array(CommandLine.arguments.dropFirst())))
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
