/// What the NATS broker puts on the wire, as text, and how it reads it back. Pure: no connection, no loop, so
/// every malformed input can be tried without a server.
///
/// Subjects (`NATSSubjects`, prefix `spotter` unless configured): a user's events go on `spotter.user.<token>`,
/// presence on `spotter.presence`, committed records on `spotter.log`. A user id of `[A-Za-z0-9_-]` is its own
/// token; any other (a '.', '*', '>', a space, an '=', anything outside ASCII, the empty id) is `=` and the hex
/// of its UTF-8. The encoded alphabet has no '.',
/// '*', '>' or whitespace, and a plain token never starts with '=', so no id can name another's subject, span
/// two subject tokens, or be a wildcard.
public enum NATSWire {
    /// A server URL as it may be logged: `nats://user:password@host:4222` becomes `nats://host:4222`.
    public static func loggable(url: String) -> String {
        guard let scheme = url.firstRange(of: "://"), let at = url[scheme.upperBound...].lastIndex(of: "@") else { return url }
        return String(url[..<scheme.upperBound]) + url[url.index(after: at)...]
    }


    /// Presence messages are cut in parts below this many bytes: far under NATS's 1 MB default maximum payload,
    /// and small enough that one part never holds up the connection for long.
    static let presencePartBytes = 60_000

    static func subject(userID: String) -> String { NATSSubjects.standard.subject(userID: userID) }

    static func userID(subject: String) -> String? { NATSSubjects.standard.userID(subject: subject) }

    /// A user id as one subject token (also how ids travel in presence messages: a token has no space).
    static func token(_ userID: String) -> String {
        if isPlain(userID) { return userID }
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = [UInt8(ascii: "=")]
        for byte in userID.utf8 {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// The id a token stands for; nil for what `token` never makes (a malformed or hostile message).
    static func userID(token: Substring) -> String? {
        guard token.first == "=" else { return isPlain(token) ? String(token) : nil }
        let hex = Array(token.utf8.dropFirst())
        guard hex.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.count / 2)
        for index in stride(from: 0, to: hex.count, by: 2) {
            guard let high = hexValue(hex[index]), let low = hexValue(hex[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        guard let id = String(validating: bytes, as: UTF8.self), !isPlain(id) else { return nil }
        return id
    }

    /// Ids (and node ids) that stand for themselves on the wire.
    static func isPlain<S: StringProtocol>(_ text: S) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == 45 || byte == 95
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 97...102: byte - 87
        default: nil
        }
    }
}

/// One event on a user's subject: `L<cursor> <frame>` (logged) or `E <frame>` (ephemeral). The frame is the
/// rest of the payload, as it is (JSON text, spaces and newlines included).
enum UserEvent: Equatable {
    case logged(cursor: Int64, frame: String)
    case ephemeral(frame: String)

    var payload: String {
        switch self {
        case .logged(let cursor, let frame): "L\(cursor) \(frame)"
        case .ephemeral(let frame): "E \(frame)"
        }
    }

    /// Nil for anything else (the caller logs and drops it).
    init?(payload: String) {
        guard let space = payload.firstIndex(of: " ") else { return nil }
        let head = payload[..<space]
        let frame = String(payload[payload.index(after: space)...])
        if head == "E" {
            self = .ephemeral(frame: frame)
        } else if head.first == "L", let cursor = Int64(head.dropFirst()) {
            self = .logged(cursor: cursor, frame: frame)
        } else {
            return nil
        }
    }
}

/// One message on `spotter.presence`: words separated by single spaces, the kind first, then the sender's node
/// id, then user tokens.
///
/// - `B <node>`: a beat; a node unheard for the dead-after time is gone, and so are its users.
/// - `U <node> <user>…` / `D <node> <user>…`: these users came online / went offline on that node.
/// - `S <node> <k>/<n> <user>…`: part k of n of the node's full list; the receiver swaps the whole list in once
///   part n arrived, so nobody flickers offline while a list is in transit.
/// - `H <node>`: hello, a node (re)connected: everyone, send your full list.
/// - `R <node> <target>`: request, `target`, send your full list: the sender heard from it without knowing its
///   list (it had forgotten it after a silence that was not a disconnection, such as a partition between NATS
///   servers that healed).
/// - `G <node>`: goodbye, a clean close: drop this node's users now.
enum PresenceMessage: Equatable {
    case beat(node: String)
    case online(node: String, users: [String])
    case offline(node: String, users: [String])
    case fullList(node: String, part: Int, parts: Int, users: [String])
    case hello(node: String)
    case request(node: String, target: String)
    case goodbye(node: String)

    var node: String {
        switch self {
        case .beat(let node), .online(let node, _), .offline(let node, _), .fullList(let node, _, _, _),
             .hello(let node), .request(let node, _), .goodbye(let node):
            node
        }
    }

    var text: String {
        switch self {
        case .beat(let node): "B \(node)"
        case .hello(let node): "H \(node)"
        case .goodbye(let node): "G \(node)"
        case .request(let node, let target): "R \(node) \(target)"
        case .online(let node, let users): (["U", node] + users.map(NATSWire.token)).joined(separator: " ")
        case .offline(let node, let users): (["D", node] + users.map(NATSWire.token)).joined(separator: " ")
        case .fullList(let node, let part, let parts, let users):
            (["S", node, "\(part)/\(parts)"] + users.map(NATSWire.token)).joined(separator: " ")
        }
    }

    /// Nil for a malformed message, whole: an unknown kind, a node id that is not plain, a user token that
    /// `NATSWire.token` would never write, a part number out of range.
    init?(text: String) {
        let words = text.split(separator: " ", omittingEmptySubsequences: false)
        guard words.count >= 2, NATSWire.isPlain(words[1]) else { return nil }
        let node = String(words[1])
        func users(from start: Int) -> [String]? {
            var ids: [String] = []
            ids.reserveCapacity(max(0, words.count - start))
            for word in words.dropFirst(start) {
                guard let id = NATSWire.userID(token: word) else { return nil }
                ids.append(id)
            }
            return ids
        }
        switch words[0] {
        case "B" where words.count == 2: self = .beat(node: node)
        case "H" where words.count == 2: self = .hello(node: node)
        case "G" where words.count == 2: self = .goodbye(node: node)
        case "R" where words.count == 3 && NATSWire.isPlain(words[2]): self = .request(node: node, target: String(words[2]))
        case "U":
            guard let ids = users(from: 2) else { return nil }
            self = .online(node: node, users: ids)
        case "D":
            guard let ids = users(from: 2) else { return nil }
            self = .offline(node: node, users: ids)
        case "S":
            guard words.count >= 3 else { return nil }
            let numbers = words[2].split(separator: "/", omittingEmptySubsequences: false)
            guard numbers.count == 2, let part = Int(numbers[0]), let parts = Int(numbers[1]),
                  part >= 1, part <= parts, let ids = users(from: 3) else { return nil }
            self = .fullList(node: node, part: part, parts: parts, users: ids)
        default:
            return nil
        }
    }

    /// A node's full list, in parts below `maxBytes` each (at least one part: an empty list is news too).
    static func fullList(node: String, users: some Sequence<String>, maxBytes: Int = NATSWire.presencePartBytes)
        -> [PresenceMessage] {
        let chunks = chunked(users, headerBytes: node.utf8.count + 16, maxBytes: maxBytes)
        return chunks.enumerated().map { index, chunk in
            .fullList(node: node, part: index + 1, parts: chunks.count, users: chunk)
        }
    }

    /// Changes gathered in one loop iteration, as few `U` and `D` messages as fit below `maxBytes` each.
    static func changes(node: String, online: [String], offline: [String], maxBytes: Int = NATSWire.presencePartBytes)
        -> [PresenceMessage] {
        let header = node.utf8.count + 4
        let up = online.isEmpty ? [] : chunked(online, headerBytes: header, maxBytes: maxBytes)
        let down = offline.isEmpty ? [] : chunked(offline, headerBytes: header, maxBytes: maxBytes)
        return up.map { .online(node: node, users: $0) } + down.map { .offline(node: node, users: $0) }
    }

    /// Users grouped so that each group's tokens, with a space each and the header, stay within `maxBytes`.
    private static func chunked(_ users: some Sequence<String>, headerBytes: Int, maxBytes: Int) -> [[String]] {
        var chunks: [[String]] = [[]]
        var size = headerBytes
        for user in users {
            let bytes = NATSWire.token(user).utf8.count + 1
            if size + bytes > maxBytes, !chunks[chunks.count - 1].isEmpty {
                chunks.append([])
                size = headerBytes
            }
            chunks[chunks.count - 1].append(user)
            size += bytes
        }
        return chunks
    }
}
