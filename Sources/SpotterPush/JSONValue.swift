import Foundation
import SpotterPorts

/// The JSON the providers write: objects keep their keys in the order given, so a payload's bytes are the same
/// every time (the tests compare them). Strings are written as UTF-8 with `"`, `\` and control characters
/// escaped (U+2028 and U+2029 too, for JavaScript readers); nothing else is.
enum JSONValue: Equatable {
    case string(String)
    case int(Int64)
    case bool(Bool)
    case object([(String, JSONValue)])

    static func == (a: JSONValue, b: JSONValue) -> Bool { a.bytes == b.bytes }

    var bytes: [UInt8] {
        var out: [UInt8] = []
        write(to: &out)
        return out
    }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    func write(to out: inout [UInt8]) {
        switch self {
        case .string(let text): Self.writeString(text, to: &out)
        case .int(let value): out += Array(String(value).utf8)
        case .bool(let value): out += Array((value ? "true" : "false").utf8)
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ text: String, to out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case "\\": out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case "\n": out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case "\r": out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case "\t": out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case _ where scalar.value < 0x20 || scalar == "\u{7F}" || scalar == "\u{2028}" || scalar == "\u{2029}":
                let value = scalar.value
                out += Array("\\u".utf8) + [hex[Int(value >> 12 & 0xF)], hex[Int(value >> 8 & 0xF)],
                                            hex[Int(value >> 4 & 0xF)], hex[Int(value & 0xF)]]
            default: out += Array(String(scalar).utf8)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// Pieces of a push service's JSON error answer, read leniently: a body that is not JSON gives nils.
enum ErrorBody {
    /// The top-level `reason` (APNs: `{"reason":"BadDeviceToken"}`).
    static func reason(_ body: [UInt8]) -> String? {
        (object(body)?["reason"] as? String).map(clean)
    }

    /// FCM's `error.status` and the `errorCode`s of its `details` (`UNREGISTERED`, `INVALID_ARGUMENT`, …).
    static func fcm(_ body: [UInt8]) -> (status: String?, codes: [String], message: String?) {
        guard let error = object(body)?["error"] as? [String: Any] else { return (nil, [], nil) }
        let details = error["details"] as? [[String: Any]] ?? []
        return ((error["status"] as? String).map(clean), details.compactMap { ($0["errorCode"] as? String).map(clean) },
                (error["message"] as? String).map(clean))
    }

    static func object(_ body: [UInt8]) -> [String: Any]? {
        guard !body.isEmpty else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
    }

    /// A push service's words, bounded and without control characters before they reach a log or an outcome.
    static func clean(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(200)))
    }
}

/// An outcome decided before a request is sent (bad subscription keys, a failed token grant), carried as an error.
public struct OutcomeError: Error, Sendable, Equatable {
    public let outcome: PushOutcome
    public init(_ outcome: PushOutcome) { self.outcome = outcome }
}
