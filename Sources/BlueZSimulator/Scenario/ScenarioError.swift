/// A scenario that cannot be used: where it is wrong and why.
public struct ScenarioError: Error, Sendable, CustomStringConvertible {
    /// The file, when the scenario came from one.
    public var file: String?
    /// 1-based line and column of the offending node, when known.
    public var line: Int?
    public var column: Int?
    /// The key path of the offending node (`devices[2].services[0].uuid`).
    public var path: String
    public var message: String

    public init(file: String? = nil, line: Int? = nil, column: Int? = nil, path: String = "", message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.path = path
        self.message = message
    }

    /// `scenario.yaml:12:7: devices[0].rssi: expected an integer`
    public var description: String {
        var text = file ?? "scenario"
        if let line {
            text += ":\(line)"
            if let column { text += ":\(column)" }
        }
        text += ": "
        if !path.isEmpty { text += path + ": " }
        return text + message
    }
}
