import FoundationEssentials

/// A command from a `/v1/ws` text frame, decoded once into its typed value.
///
/// The envelope rules (Protocol/README.md, "The live socket"):
/// - the frame is a JSON object with a string `id` of 1…64 characters, which
///   the reply echoes. Without a usable `id` nothing is executed and the error
///   reply carries `"id":null`, as for a frame that is not JSON;
/// - `type` names the command; the other keys are that command's fields, and
///   an unknown key is refused with `unknown_field`.
public enum SocketCommand: Equatable, Sendable {
    case me
    case authRefresh(RefreshRequest)
    case send(SendMessageCommand)
    case delivered(ReceiptCommand)
    case read(ReceiptCommand)
    case threads
    case history(HistoryCommand)
    case typing(ThreadCommand)
    case resume(ResumeCommand)

    public static let maxIDLength = 64

    /// The command, or the error to reply with and the id to reply to (nil when the id itself is unusable).
    public static func decode(_ bytes: [UInt8]) -> Result<(id: String, command: SocketCommand), DecodeFailure> {
        if let fast = FlatCommand.decode(bytes) { return .success(fast) }
        return decodeGenerally(bytes)
    }

    /// Every frame through `JSONDecoder` (the fast path's reference).
    static func decodeGenerally(_ bytes: [UInt8]) -> Result<(id: String, command: SocketCommand), DecodeFailure> {
        let envelope: Envelope
        do {
            envelope = try JSONDecoder().decode(Envelope.self, from: Data(bytes))
        } catch let error as APIError {
            return .failure(DecodeFailure(id: nil, error: error))
        } catch {
            return .failure(DecodeFailure(id: nil, error: APIError(.badRequest)))
        }
        return envelope.result
    }

    public struct DecodeFailure: Error, Equatable, Sendable {
        public var id: String?
        public var error: APIError
    }

    /// Reads `id` and `type`, then the command's own fields from the same object.
    private struct Envelope: Decodable {
        var result: Result<(id: String, command: SocketCommand), DecodeFailure>

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            let id: String
            do {
                guard let value = try container.decodeIfPresent(String.self, forKey: AnyCodingKey("id")) else {
                    throw APIError(.missingField, field: "id")
                }
                guard !value.isEmpty, value.count <= SocketCommand.maxIDLength, value.utf8.count <= 4 * SocketCommand.maxIDLength else { throw APIError(.outOfRange, field: "id") }
                id = value
            } catch let error as APIError {
                throw error
            } catch {
                throw APIError(.badRequest, field: "id")
            }
            do {
                let type = try container.decodeIfPresent(String.self, forKey: AnyCodingKey("type"))
                result = .success((id, try Self.command(type, decoder)))
            } catch let error as APIError {
                result = .failure(DecodeFailure(id: id, error: error))
            } catch {
                result = .failure(DecodeFailure(id: id, error: APIError(wrappingDecoding: error)))
            }
        }

        static func command(_ type: String?, _ decoder: any Decoder) throws -> SocketCommand {
            func body<T: KnownFields>(_ type: T.Type) throws -> T {
                try KnownFieldsCheck.check(decoder, T.self, extra: ["id", "type"])
                return try T(from: decoder)
            }
            switch type {
            case "me": _ = try body(EmptyCommand.self); return .me
            case "auth.refresh": return .authRefresh(try body(RefreshRequest.self))
            case "message.send": return .send(try body(SendMessageCommand.self))
            case "receipt.delivered": return .delivered(try body(ReceiptCommand.self))
            case "thread.read": return .read(try body(ReceiptCommand.self))
            case "threads": _ = try body(EmptyCommand.self); return .threads
            case "history": return .history(try body(HistoryCommand.self))
            case "typing": return .typing(try body(ThreadCommand.self))
            case "resume": return .resume(try body(ResumeCommand.self))
            case nil: throw APIError(.missingField, field: "type")
            default: throw APIError(.unknownCommand, field: "type")
            }
        }
    }
}

extension APIError {
    /// A `DecodingError` as the wire shows it: `bad_request`, naming the field where the decoder can tell
    /// (`meal.calories` for a nested one). Any other error is a plain `bad_request`.
    public init(wrappingDecoding error: any Error) {
        if let error = error as? APIError {
            self = error
            return
        }
        func field(_ path: [any CodingKey]) -> String? {
            let names = path.filter { $0.intValue == nil }.map(\.stringValue)
            return names.isEmpty ? nil : names.joined(separator: ".")
        }
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            self.init(.missingField, field: field(context.codingPath + [key]))
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
             DecodingError.dataCorrupted(let context):
            self.init(.badRequest, field: field(context.codingPath))
        default:
            self.init(.badRequest)
        }
    }
}
