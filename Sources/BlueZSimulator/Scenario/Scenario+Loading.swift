import Foundation
import Yams

extension Scenario {
    /// Reads a scenario file (YAML, or JSON).
    ///
    /// Throws `ScenarioError` with the file, line and column of what is
    /// wrong.
    public static func load(path: String) throws(ScenarioError) -> Scenario {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ScenarioError(file: path, message: "cannot read the file: \(error.localizedDescription)")
        }
        do {
            return try parse(text)
        } catch var error {
            error.file = path
            throw error
        }
    }

    /// Parses a scenario from YAML (or JSON) text.
    public static func parse(_ text: String) throws(ScenarioError) -> Scenario {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw Self.syntaxError(error)
        } catch {
            throw ScenarioError(message: "\(error)")
        }
        guard let root else { throw ScenarioError(message: "the scenario is empty") }
        return try ScenarioParser().scenario(YAMLCursor(node: root, path: ""))
    }

    private static func syntaxError(_ error: YamlError) -> ScenarioError {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _),
            .composer(_, let problem, let mark, _):
            return ScenarioError(line: mark.line, column: mark.column, message: "YAML syntax: \(problem)")
        default:
            return ScenarioError(message: "YAML: \(error)")
        }
    }
}
