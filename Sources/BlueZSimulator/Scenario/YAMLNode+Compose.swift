import CYAML

extension YAMLNode {
    /// Nesting beyond this is refused: a scenario is a few levels deep, and
    /// an alias to one of its own ancestors would otherwise recurse forever.
    static let maximumDepth = 64
    /// Nodes beyond this are refused: aliases of aliases can expand a small
    /// file into an exponential tree.
    static let maximumNodes = 1_000_000

    /// Composes the single document in `text` (YAML 1.1, or JSON), or nil
    /// when the text holds no document. Syntax errors name libyaml's
    /// problem and where it is.
    static func compose(_ text: String) throws(ScenarioError) -> YAMLNode? {
        let bytes = Array(text.utf8)
        if bytes.isEmpty { return nil }
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { throw ScenarioError(message: "YAML: out of memory") }
        defer { yaml_parser_delete(&parser) }
        let result: Result<YAMLNode?, ScenarioError> = bytes.withUnsafeBufferPointer { buffer in
            // libyaml reads the buffer while loading, so it stays inside this closure.
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            return Result { () throws(ScenarioError) in try loadSingleDocument(&parser) }
        }
        return try result.get()
    }

    private static func loadSingleDocument(_ parser: inout yaml_parser_t) throws(ScenarioError) -> YAMLNode? {
        var document = yaml_document_t()
        guard yaml_parser_load(&parser, &document) == 1 else { throw syntaxError(parser) }
        defer { yaml_document_delete(&document) }
        guard yaml_document_get_root_node(&document) != nil else { return nil }
        var budget = maximumNodes
        let root = try node(1, in: &document, depth: 0, budget: &budget)

        var next = yaml_document_t()
        guard yaml_parser_load(&parser, &next) == 1 else { throw syntaxError(parser) }
        defer { yaml_document_delete(&next) }
        if yaml_document_get_root_node(&next) != nil {
            throw ScenarioError(
                line: Int(next.start_mark.line) + 1, column: Int(next.start_mark.column) + 1,
                message: "YAML syntax: expected a single document in the stream, but found another document")
        }
        return root
    }

    /// The node numbered `index` (libyaml numbers a document's nodes from 1).
    private static func node(
        _ index: Int32, in document: inout yaml_document_t, depth: Int, budget: inout Int
    ) throws(ScenarioError) -> YAMLNode {
        guard let pointer = yaml_document_get_node(&document, index) else {
            throw ScenarioError(message: "YAML: node \(index) is missing from the document")
        }
        let node = pointer.pointee
        let line = Int(node.start_mark.line) + 1
        let column = Int(node.start_mark.column) + 1
        budget -= 1
        guard depth < maximumDepth, budget >= 0 else {
            throw ScenarioError(
                line: line, column: column,
                message: depth < maximumDepth
                    ? "YAML: more than \(maximumNodes) nodes once aliases are expanded"
                    : "YAML: nested more than \(maximumDepth) deep (an alias to its own ancestor?)")
        }
        switch node.type {
        case YAML_SCALAR_NODE:
            let scalar = node.data.scalar
            let text = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
            return YAMLNode(content: .scalar(text, plain: scalar.style == YAML_PLAIN_SCALAR_STYLE), line: line, column: column)
        case YAML_SEQUENCE_NODE:
            var items: [YAMLNode] = []
            var item = node.data.sequence.items.start
            while let current = item, current != node.data.sequence.items.top {
                items.append(try self.node(current.pointee, in: &document, depth: depth + 1, budget: &budget))
                item = current + 1
            }
            return YAMLNode(content: .sequence(items), line: line, column: column)
        case YAML_MAPPING_NODE:
            var pairs: [(key: YAMLNode, value: YAMLNode)] = []
            var pair = node.data.mapping.pairs.start
            while let current = pair, current != node.data.mapping.pairs.top {
                let key = try self.node(current.pointee.key, in: &document, depth: depth + 1, budget: &budget)
                let value = try self.node(current.pointee.value, in: &document, depth: depth + 1, budget: &budget)
                pairs.append((key, value))
                pair = current + 1
            }
            return YAMLNode(content: .mapping(pairs), line: line, column: column)
        default:
            throw ScenarioError(line: line, column: column, message: "YAML: an empty node")
        }
    }

    /// libyaml's reason and position (0-based there) for a document it
    /// could not load.
    private static func syntaxError(_ parser: yaml_parser_t) -> ScenarioError {
        let problem = parser.problem.map { String(cString: $0) } ?? "unknown error"
        switch parser.error {
        case YAML_SCANNER_ERROR, YAML_PARSER_ERROR, YAML_COMPOSER_ERROR:
            return ScenarioError(
                line: Int(parser.problem_mark.line) + 1, column: Int(parser.problem_mark.column) + 1,
                message: "YAML syntax: \(problem)")
        case YAML_MEMORY_ERROR:
            return ScenarioError(message: "YAML: out of memory")
        default:
            return ScenarioError(message: "YAML: \(problem) at byte \(parser.problem_offset)")
        }
    }
}
