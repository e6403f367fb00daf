import FoundationEssentials

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

    public static func encode(_ records: [ChatRecord]) -> String {
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
