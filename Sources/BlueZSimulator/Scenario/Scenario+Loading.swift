import Glibc

extension Scenario {
    /// Reads a scenario file (YAML, or JSON).
    ///
    /// Throws `ScenarioError` with the file, line and column of what is
    /// wrong.
    public static func load(path: String) throws(ScenarioError) -> Scenario {
        let text = try readFile(path)
        do {
            return try parse(text)
        } catch var error {
            error.file = path
            throw error
        }
    }

    /// Parses a scenario from YAML (or JSON) text.
    public static func parse(_ text: String) throws(ScenarioError) -> Scenario {
        guard let root = try YAMLNode.compose(text) else { throw ScenarioError(message: "the scenario is empty") }
        return try ScenarioParser().scenario(YAMLCursor(node: root, path: ""))
    }

    /// The file's bytes as UTF-8 text, read with POSIX calls (the
    /// simulator links no Foundation).
    private static func readFile(_ path: String) throws(ScenarioError) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw readError(path) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw readError(path)
            }
            bytes.append(contentsOf: chunk[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func readError(_ path: String) -> ScenarioError {
        ScenarioError(file: path, message: "cannot read the file: \(String(cString: strerror(errno)))")
    }
}
