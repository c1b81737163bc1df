import Foundation
import Testing

/// README.md shows the examples ReadmeExamples.swift compiles, verbatim.
@Suite struct ReadmeExampleTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let readme = directory.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("README.md")

    /// The lines between `// readme:NAME` and `// readme:end`.
    static func block(_ name: String) throws -> String {
        let source = try String(contentsOf: directory.appendingPathComponent("ReadmeExamples.swift"), encoding: .utf8)
        guard let start = source.range(of: "// readme:\(name)\n"),
            let end = source.range(of: "// readme:end", range: start.upperBound..<source.endIndex)
        else { return "" }
        return String(source[start.upperBound..<end.lowerBound])
    }

    @Test(arguments: ["central", "peripheral", "async"])
    func theReadmeShowsTheCompiledExample(name: String) throws {
        let block = try Self.block(name)
        #expect(block.count > 200)
        let readme = try String(contentsOf: Self.readme, encoding: .utf8)
        #expect(readme.contains("```swift\n" + block + "```"), "README.md must show the \(name) example of ReadmeExamples.swift")
    }
}
