import SpotterProtocol

/// The fast path of `LogStreamCodec.decode` (issue 33 item 4: profiled on a follower of a three-process cluster,
/// `JSONDecoder` on the log stream was its largest part of following, ahead of applying the records). A batch is an
/// array of flat objects of integers and strings, which `FlatFields` reads in one pass without a dictionary or a
/// `Decoder`; anything else — a missing or mistyped field, a duplicate key, a nested value, `null` — returns nil and
/// the batch takes the general path, so this only ever returns what `JSONDecoder` would have (a test compares the
/// two over random batches).
extension LogStreamCodec {
    static func flatDecode(_ text: String) -> [ChatRecord]? {
        var text = text
        return text.withUTF8 { bytes -> [ChatRecord]? in
            var index = 0
            let end = bytes.count
            func skipSpace() {
                while index < end, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                    index += 1
                }
            }
            skipSpace()
            guard index < end, bytes[index] == UInt8(ascii: "[") else { return nil }
            index += 1
            skipSpace()
            var records: [ChatRecord] = []
            if index < end, bytes[index] == UInt8(ascii: "]") {
                index += 1
                skipSpace()
                return index == end ? records : nil
            }
            while true {
                skipSpace()
                guard index < end, bytes[index] == UInt8(ascii: "{") else { return nil }
                // The object's end: the first `}` outside a string (the objects are flat).
                let start = index
                var inString = false
                while index < end {
                    let byte = bytes[index]
                    if inString {
                        if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") { inString = false }
                    } else if byte == UInt8(ascii: "\"") {
                        inString = true
                    } else if byte == UInt8(ascii: "}") {
                        break
                    } else if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                        if index != start { return nil }
                    }
                    index += 1
                }
                guard index < end else { return nil }
                index += 1
                guard let fields = FlatFields.parse(Array(bytes[start..<index])), let record = record(fields) else { return nil }
                records.append(record)
                skipSpace()
                guard index < end else { return nil }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard bytes[index] == UInt8(ascii: "]") else { return nil }
                index += 1
                skipSpace()
                return index == end ? records : nil
            }
        }
    }

    private static func record(_ fields: FlatFields) -> ChatRecord? {
        guard case .some(.some(let p)) = fields.integer("p"), case .some(.some(let k)) = fields.integer("k"),
              case .some(.some(let t)) = fields.integer("t"), case .some(.some(let s)) = fields.integer("s"),
              case .some(.some(let q)) = fields.integer("q"), case .some(.some(let a)) = fields.integer("a"),
              case .some(.some(let b)) = fields.integer("b"), case .some(.some(let at)) = fields.integer("at"),
              case .some(let r) = fields.string("r"), case .some(let y) = fields.string("y"),
              ChatRecord.Kind(rawValue: k) != nil, Side(rawValue: s) != nil
        else { return nil }
        return ChatRecord(pos: p, threadNo: t, side: s, seq: q, at: at, columns: ChatRecord.Columns(kind: k, a: a, b: b, ref: r, body: y))
    }
}
