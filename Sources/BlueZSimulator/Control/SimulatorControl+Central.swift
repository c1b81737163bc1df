import DBus

extension SimulatorControl {
    /// The ATT error of a simulated central's request; its message is the
    /// code (`0x0e`).
    static let attError = ErrorName(unchecked: "org.blegateway.Simulator.Error.ATT")

    /// The simulated remote central: `CentralRead(s adapter, s
    /// characteristic) -> ay`, `CentralWrite(s adapter, s characteristic,
    /// ay value)`, `CentralSubscribe(s adapter, s characteristic)`,
    /// `CentralUnsubscribe(s adapter, s characteristic)`, `CentralDisconnect(s
    /// adapter)`, `CentralReceived(s
    /// adapter, s characteristic) -> aay`, `RegisteredApplications() -> as`,
    /// `RegisteredAdvertisements() -> a(sa{sv})`.
    static func centralMethods(_ simulator: SimulatedBlueZ) -> [ExportedInterface.Method] {
        typealias Method = ExportedInterface.Method
        typealias Argument = ExportedInterface.Argument
        let adapter = Argument("adapter", .string)
        let characteristic = Argument("characteristic", .string)
        @Sendable func target(_ call: MethodCall) throws(DBusError) -> (String, GATTUUID) {
            let id = try argument(call, 0, \.string, "adapter")
            let text = try argument(call, 1, \.string, "characteristic")
            guard let uuid = GATTUUID(text) else {
                throw DBusError(.invalidArgs, "characteristic: '\(text)' is not a UUID")
            }
            return (id, uuid)
        }
        return [
            Method("CentralRead", inputs: [adapter, characteristic], outputs: [Argument("value", .array(.byte))]) {
                call in
                let (id, uuid) = try target(call)
                return [.bytes(try await central { try await simulator.centralRead(adapter: id, characteristic: uuid) })]
            },
            Method("CentralWrite", inputs: [adapter, characteristic, Argument("value", .array(.byte))]) { call in
                let (id, uuid) = try target(call)
                let value = try argument(call, 2, \.bytes, "value")
                try await central { try await simulator.centralWrite(value, adapter: id, characteristic: uuid) }
                return []
            },
            Method("CentralSubscribe", inputs: [adapter, characteristic]) { call in
                let (id, uuid) = try target(call)
                try await central { try await simulator.centralSubscribe(adapter: id, characteristic: uuid) }
                return []
            },
            Method("CentralUnsubscribe", inputs: [adapter, characteristic]) { call in
                let (id, uuid) = try target(call)
                try await central { try await simulator.centralUnsubscribe(adapter: id, characteristic: uuid) }
                return []
            },
            Method("CentralDisconnect", inputs: [adapter]) { call in
                let id = try argument(call, 0, \.string, "adapter")
                try await central { try await simulator.centralDisconnect(adapter: id) }
                return []
            },
            Method("CentralReceived", inputs: [adapter, characteristic], outputs: [Argument("values", .array(.array(.byte)))]) {
                call in
                let (id, uuid) = try target(call)
                let values = try await central { try await simulator.centralReceived(adapter: id, characteristic: uuid) }
                return [.array(.array(.byte), values.map { .bytes($0) })]
            },
            Method("RegisteredApplications", outputs: [Argument("applications", .array(.string))]) { _ in
                [.strings(await simulator.registeredApplications())]
            },
            Method(
                "RegisteredAdvertisements",
                outputs: [Argument("advertisements", .array(.structure([.string, .dictionary(key: .string, value: .variant)])))]
            ) { _ in
                let advertisements = await simulator.registeredAdvertisements()
                return [
                    .array(
                        .structure([.string, .dictionary(key: .string, value: .variant)]),
                        advertisements.map { .structure([.string($0.path), .vardict($0.properties)]) })
                ]
            },
        ]
    }

    /// Runs a simulated central's request: an ATT error becomes
    /// `org.blegateway.Simulator.Error.ATT`, other refusals `Failed`.
    private static func central<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as CentralATTError {
            throw DBusError(attError, error.description)
        } catch let error as DBusError {
            throw error
        } catch {
            throw DBusError(failed, "\(error)")
        }
    }
}
