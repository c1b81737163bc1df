import ArgumentParser
import Foundation
import GatewayCoreBluetooth

/// The characteristic a GATT command names.
struct CharacteristicArguments: ParsableArguments {
    @Argument(help: "The device's Bluetooth address.") var address: String
    @Argument(help: "The characteristic's UUID (2a37, or 128-bit).") var characteristic: String
    @Option(help: ArgumentHelp("The service it is in, when its UUID is in more than one.", valueName: "uuid"))
    var service: String?

    func resolve(_ options: ClientOptions) async throws -> (CBCentralManager, CBPeripheral, CBCharacteristic) {
        let (central, peripheral) = try await options.discoveredPeripheral(address)
        return (central, peripheral, try ClientOptions.characteristic(characteristic, service: service, of: peripheral))
    }
}

/// `blegateway gatt`: the GATT tree.
struct GATTCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatt", abstract: "Print a connected device's services, characteristics and descriptors.",
        discussion: ClientExitStatus.help)

    @OptionGroup var options: ClientOptions
    @Argument(help: "The device's Bluetooth address.") var address: String

    func run() async throws {
        try await runClient {
            let (central, peripheral) = try await options.discoveredPeripheral(address)
            defer { central.invalidate() }
            let services = peripheral.services ?? []
            if options.json {
                return Terminal.printJSON(
                    services.map { service in
                        [
                            "uuid": service.uuid.uuidString, "primary": service.isPrimary,
                            "characteristics": (service.characteristics ?? []).map { characteristic in
                                [
                                    "uuid": characteristic.uuid.uuidString,
                                    "properties": Self.names(characteristic.properties),
                                    "descriptors": (characteristic.descriptors ?? []).map(\.uuid.uuidString),
                                ] as [String: Any]
                            },
                        ] as [String: Any]
                    })
            }
            for service in services {
                print("service \(service.uuid.uuidString)\(service.isPrimary ? "" : " (secondary)")")
                for characteristic in service.characteristics ?? [] {
                    print("  characteristic \(characteristic.uuid.uuidString)  \(Self.names(characteristic.properties).joined(separator: ","))")
                    for descriptor in characteristic.descriptors ?? [] { print("    descriptor \(descriptor.uuid.uuidString)") }
                }
            }
        }
    }

    static func names(_ properties: CBCharacteristicProperties) -> [String] {
        let all: [(CBCharacteristicProperties, String)] = [
            (.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "write-without-response"), (.write, "write"),
            (.notify, "notify"), (.indicate, "indicate"), (.authenticatedSignedWrites, "signed-write"),
            (.extendedProperties, "extended"),
        ]
        return all.filter { properties.contains($0.0) }.map(\.1)
    }
}

/// `blegateway read`.
struct ReadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read", abstract: "Read a characteristic's value (printed in hex).", discussion: ClientExitStatus.help)

    @OptionGroup var options: ClientOptions
    @OptionGroup var target: CharacteristicArguments

    func run() async throws {
        try await runClient {
            let (central, peripheral, characteristic) = try await target.resolve(options)
            defer { central.invalidate() }
            let value = try await peripheral.value(of: characteristic)
            if options.json {
                Terminal.printJSON(["value": Hex.string(value), "encoding": "hex"])
            } else {
                print(Hex.string(value))
            }
        }
    }
}

/// `blegateway write`.
struct WriteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write", abstract: "Write a characteristic's value (given in hex).",
        discussion: "A refused write exits 6 with the ATT error on stderr.\n\n" + ClientExitStatus.help)

    @OptionGroup var options: ClientOptions
    @OptionGroup var target: CharacteristicArguments
    @Argument(help: "The bytes, in hex (0e77).") var value: String
    @Flag(help: "Write without response (a command).") var withoutResponse = false

    func validate() throws {
        guard Hex.data(value) != nil else { throw ValidationError("'\(value)' is not hex bytes (0e77)") }
    }

    func run() async throws {
        try await runClient {
            let (central, peripheral, characteristic) = try await target.resolve(options)
            defer { central.invalidate() }
            try await peripheral.write(Hex.data(value) ?? Data(), to: characteristic, type: withoutResponse ? .withoutResponse : .withResponse)
            if options.json { Terminal.printJSON(["written": true]) }
        }
    }
}

/// `blegateway notify`.
struct NotifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notify", abstract: "Print a characteristic's notifications (hex, one a line) until Ctrl-C.",
        discussion: "It ends by itself (exit 0) when the gateway ends the subscription (the device disconnected).\n\n"
            + ClientExitStatus.help)

    @OptionGroup var options: ClientOptions
    @OptionGroup var target: CharacteristicArguments

    func run() async throws {
        try await runClient {
            let (central, peripheral, characteristic) = try await target.resolve(options)
            defer { central.invalidate() }
            for try await value in try await peripheral.notifications(of: characteristic) {
                if options.json {
                    Terminal.printJSON(["value": Hex.string(value), "encoding": "hex"])
                } else {
                    Terminal.line(Hex.string(value))
                }
            }
        }
    }
}

/// Hex for the command line.
enum Hex {
    static func string(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    static func data(_ text: String) -> Data? {
        var hex = text.hasPrefix("0x") ? String(text.dropFirst(2)) : text
        hex.removeAll { $0 == ":" || $0 == " " || $0 == "-" }
        guard hex.count % 2 == 0, hex.allSatisfy(\.isHexDigit) else { return nil }
        var data = Data()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            data.append(byte)
            index = next
        }
        return data
    }
}
