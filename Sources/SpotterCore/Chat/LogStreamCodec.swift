import FoundationEssentials
import SpotterProtocol

/// Committed records as they travel between processes on the log stream (cluster mode: every process publishes
/// what it committed, every process follows; `Sources/SpotterPostgres/CLUSTER.md`). One JSON array per batch,
/// one object per record with one-letter keys, its fields the log's columns (`ChatRecord.Columns`). The stream is a fast path: a record it loses is read back from the
/// store (`LogSequencer.gap`), so the codec only has to be exact, not durable.
public enum LogStreamCodec {
    private struct Wire: Codable {
        var p: Int64
        var k: Int64
        var t: Int64
        var s: Int64
        var q: Int64
        var a: Int64
        var b: Int64
        var r: String?
        var y: String?
        var at: Int64
    }

    /// The batch as one JSON array, written by hand (`JSONText`): every process encodes each of its commits, and
    /// `JSONEncoder` cost about what the followers' decode did before it was flattened (issue 33 item 4). Fields
    /// in `Wire`'s order, nil strings left out, as `generalEncode` writes them (a test decodes both the same).
    public static func encode(_ records: [ChatRecord]) -> String {
        var out = "["
        out.reserveCapacity(records.count * 160 + 2)
        for (index, record) in records.enumerated() {
            let columns = record.content.columns
            var object = JSONText(capacity: 96 + (columns.body?.utf8.count ?? 0) + (columns.ref?.utf8.count ?? 0))
            object.field("p", record.pos)
            object.field("k", columns.kind)
            object.field("t", record.threadNo)
            object.field("s", record.side.rawValue)
            object.field("q", record.seq)
            object.field("a", columns.a)
            object.field("b", columns.b)
            object.field("r", columns.ref)
            object.field("y", columns.body)
            object.field("at", record.at)
            if index > 0 { out += "," }
            out += object.finish()
        }
        out += "]"
        return out
    }

    /// The batch with `JSONEncoder`: what `encode` replaced, kept for the test that compares the two.
    static func generalEncode(_ records: [ChatRecord]) -> String {
        let wire = records.map { record in
            let columns = record.content.columns
            return Wire(p: record.pos, k: columns.kind, t: record.threadNo, s: record.side.rawValue, q: record.seq, a: columns.a,
                        b: columns.b, r: columns.ref, y: columns.body, at: record.at)
        }
        // Encoding plain integers and strings cannot fail.
        return String(decoding: (try? JSONEncoder().encode(wire)) ?? Data("[]".utf8), as: UTF8.self)
    }

    /// The records of a batch, or nil for anything that is not one (a record of a kind or side this version does
    /// not know makes the whole batch unreadable: the follower then reads it from the store).
    public static func decode(_ text: String) -> [ChatRecord]? {
        if let records = flatDecode(text) { return records }  // `LogStreamCodec+Flat`
        return generalDecode(text)
    }

    /// The batch read with `JSONDecoder`: what the fast path falls back to, and what a test compares it with.
    static func generalDecode(_ text: String) -> [ChatRecord]? {
        guard let wire = try? JSONDecoder().decode([Wire].self, from: Data(text.utf8)) else { return nil }
        var records: [ChatRecord] = []
        records.reserveCapacity(wire.count)
        for item in wire {
            guard ChatRecord.Kind(rawValue: item.k) != nil, Side(rawValue: item.s) != nil else { return nil }
            records.append(ChatRecord(pos: item.p, threadNo: item.t, side: item.s, seq: item.q, at: item.at,
                                      columns: ChatRecord.Columns(kind: item.k, a: item.a, b: item.b, ref: item.r, body: item.y)))
        }
        return records
    }
}
