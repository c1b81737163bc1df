import Foundation

/// Printing for people: text from the radio is untrusted (a device name
/// can hold escape sequences that rewrite a terminal), so control
/// characters are shown as `?`; tables pad their columns.
enum Terminal {
    static func safe(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar in
                    scalar.properties.generalCategory == .control && scalar != "\n" ? "?" : scalar
                }))
    }

    /// Rows under a header, each column as wide as its widest cell.
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0.indices.contains(column) ? safe($0[column]).count : 0 }.max() ?? 0 }
        return all.map { row(_: $0, widths: widths) }.joined(separator: "\n")
    }

    /// One row: each cell made safe and padded to its width (the last as it is).
    static func row(_ cells: [String], widths: [Int]) -> String {
        cells.enumerated().map { index, cell in
            let cell = safe(cell)
            return index == cells.count - 1 || index >= widths.count
                ? cell : cell.padding(toLength: max(widths[index], cell.count), withPad: " ", startingAt: 0)
        }.joined(separator: "  ")
    }

    /// Writes a line at once (print buffers a pipe's output): for commands
    /// that follow a stream.
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Prints one JSON document (sorted keys, one line).
    static func printJSON(_ value: Any) {
        guard JSONSerialization.isValidJSONObject(value) || value is String || value is NSNumber,
            let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
        else { return }
        line(String(decoding: data, as: UTF8.self))
    }

    /// Prints raw JSON from the gateway as it came (one line).
    static func printRaw(_ data: Data) {
        if let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) {
            printJSON(object)
        } else {
            print(String(decoding: data, as: UTF8.self))
        }
    }
}
