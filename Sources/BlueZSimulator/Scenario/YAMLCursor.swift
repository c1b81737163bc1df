/// A position in a composed YAML document, with the key path that led to it,
/// so that every error about a scenario can say where it is.
struct YAMLCursor {
    let node: YAMLNode
    let path: String

    func error(_ message: String) -> ScenarioError {
        ScenarioError(line: node.line, column: node.column, path: path, message: message)
    }

    // MARK: Structure

    /// The mapping's entries, refusing keys outside `allowed` (a misspelt
    /// key is an error rather than a silently ignored setting).
    func mapping(allowed: Set<String>) throws(ScenarioError) -> [String: YAMLCursor] {
        guard case .mapping(let mapping) = node.content else { throw error("expected a mapping") }
        var result: [String: YAMLCursor] = [:]
        for (key, value) in mapping {
            guard let name = key.string else { throw YAMLCursor(node: key, path: path).error("keys must be strings") }
            let child = YAMLCursor(node: value, path: path.isEmpty ? name : path + "." + name)
            guard allowed.contains(name) else {
                throw YAMLCursor(node: key, path: child.path).error(
                    "unknown key '\(name)' (expected one of: \(allowed.sorted().joined(separator: ", ")))")
            }
            result[name] = child
        }
        return result
    }

    /// A mapping with free keys, in document order.
    func pairs() throws(ScenarioError) -> [(key: YAMLCursor, value: YAMLCursor)] {
        guard case .mapping(let mapping) = node.content else { throw error("expected a mapping") }
        return mapping.map { key, value in
            let name = key.string ?? "?"
            return (YAMLCursor(node: key, path: path), YAMLCursor(node: value, path: path + "." + name))
        }
    }

    func sequence() throws(ScenarioError) -> [YAMLCursor] {
        guard case .sequence(let sequence) = node.content else { throw error("expected a list") }
        return sequence.enumerated().map { YAMLCursor(node: $1, path: "\(path)[\($0)]") }
    }

    // MARK: Scalars

    func string() throws(ScenarioError) -> String {
        guard let text = node.string else { throw error("expected a string") }
        return text
    }

    func bool() throws(ScenarioError) -> Bool {
        guard let value = node.bool else { throw error("expected true or false") }
        return value
    }

    /// An integer in decimal or `0x` hexadecimal, within `range`.
    func integer(in range: ClosedRange<Int>) throws(ScenarioError) -> Int {
        let text = try string().lowercased()
        let value: Int? =
            if text.hasPrefix("0x") { Int(text.dropFirst(2), radix: 16) }
            else if text.hasPrefix("-0x") { Int(text.dropFirst(3), radix: 16).map { -$0 } }
            else { Int(text) }
        guard let value else { throw error("expected an integer, not '\(text)'") }
        guard range.contains(value) else {
            throw error("\(value) is out of range \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// A number of seconds or any non-negative number.
    func number(minimum: Double = 0) throws(ScenarioError) -> Double {
        let text = try string()
        guard let value = Double(text), value.isFinite else { throw error("expected a number, not '\(text)'") }
        guard value >= minimum else { throw error("must be at least \(minimum)") }
        return value
    }

    /// Bytes written as hex (`0a0b`, `0a:0b`, `0a 0b`, `0x0a0b`).
    func bytes() throws(ScenarioError) -> [UInt8] {
        var text = try string().lowercased()
        if text.hasPrefix("0x") { text.removeFirst(2) }
        let digits = Array(text.filter { $0 != ":" && $0 != " " && $0 != "-" })
        guard digits.count % 2 == 0, digits.allSatisfy(\.isHexDigit) else {
            throw error("expected hex bytes such as '0a0b', not '\(text)'")
        }
        var bytes: [UInt8] = []
        var index = 0
        while index < digits.count {
            if let byte = UInt8(String(digits[index...index + 1]), radix: 16) { bytes.append(byte) }
            index += 2
        }
        return bytes
    }

    func uuid() throws(ScenarioError) -> GATTUUID {
        let text = try string()
        guard let uuid = GATTUUID(text) else {
            throw error("expected a UUID (16-bit '180d', 32-bit or 128-bit), not '\(text)'")
        }
        return uuid
    }

    func address() throws(ScenarioError) -> DeviceAddress {
        let text = try string()
        guard let address = DeviceAddress(text) else {
            throw error("expected a Bluetooth address such as 'C4:7C:8D:6A:3E:01', not '\(text)'")
        }
        return address
    }
}
