import Foundation

/// The lines of a `--log-tap` file.
public struct TapFile {
    /// Every line that parsed, in file order.
    public let lines: [[String: Any]]
    /// Lines that did not parse (a line a crash cut short).
    public let unreadable: Int

    public init(_ path: String) {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        var lines: [[String: Any]] = []
        var unreadable = 0
        for line in text.split(separator: "\n") {
            if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] {
                lines.append(object)
            } else {
                unreadable += 1
            }
        }
        self.lines = lines
        self.unreadable = unreadable
    }

    public var refs: Set<String> { Set(lines.compactMap { $0["ref"] as? String }) }

    /// Positions in order of first appearance.
    public var firstAppearances: [Int] {
        var seen = Set<Int>()
        return lines.compactMap { $0["pos"] as? Int }.filter { seen.insert($0).inserted }
    }

    /// Lines that repeat an earlier position: nil when each repeats its first line exactly (same id, same record).
    public var differingRepeat: String? {
        var first: [Int: NSDictionary] = [:]
        for line in lines {
            guard let pos = line["pos"] as? Int else { return "a line without a position: \(line)" }
            guard line["id"] as? String == "pos:\(pos)" else { return "id \(line["id"] ?? "none") at position \(pos)" }
            if let earlier = first[pos] {
                if earlier != line as NSDictionary { return "position \(pos) came back different: \(earlier) then \(line)" }
            } else {
                first[pos] = line as NSDictionary
            }
        }
        return nil
    }

    public var repeats: Int { lines.count - firstAppearances.count }

    /// The message lines by client_message_id (the first of each).
    public var messages: [String: [String: Any]] {
        var found: [String: [String: Any]] = [:]
        for line in lines where line["kind"] as? String == "message" {
            if let ref = line["ref"] as? String, found[ref] == nil { found[ref] = line }
        }
        return found
    }
}
