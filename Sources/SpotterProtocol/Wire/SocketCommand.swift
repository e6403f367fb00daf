#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A command's body, as a `/v1/ws` text frame carries it: the frame's `type`, the command's fields under the
/// known-fields rule, and, for the commands a socket sends most, a one-pass reading of a flat frame.
public protocol SocketCommandBody: KnownFields, Equatable, Sendable {
    /// The frame's `type`.
    static var type: String { get }
    /// The body from a flat frame's fields (plain strings and integers, keys already checked), or nil to let the
    /// general path (`JSONDecoder`) read the frame and word any error. Nil unless a command provides it.
    static func flat(_ fields: FlatFields) -> Self?
    /// Refuses a number outside its documented range (`WireRange`) with `out_of_range`; called on every decoded
    /// command, whichever path read it. Nothing to check unless a command has numbers.
    func checkRanges() throws(APIError)
}

extension SocketCommandBody {
    public static func flat(_ fields: FlatFields) -> Self? { nil }
    public func checkRanges() throws(APIError) {}
}

/// Decoding a `/v1/ws` text frame once into its typed body, found by `type` in one table.
///
/// The envelope rules (Protocol/README.md, "The live socket"):
/// - the frame is a JSON object with a string `id` of 1…64 characters, which
///   the reply echoes. Without a usable `id` nothing is executed and the error
///   reply carries `"id":null`, as for a frame that is not JSON;
/// - `type` names the command; the other keys are that command's fields, and
///   an unknown key is refused with `unknown_field`.
public enum SocketCommand {
    public static let maxIDLength = 64

    /// Every command the socket accepts, by `type`: the wire contract (Protocol/README "Commands"). A feature adds
    /// its command bodies here and their handlers to the server's table.
    public static let catalog: [String: any SocketCommandBody.Type] = {
        let bodies: [any SocketCommandBody.Type] = [
            MeCommand.self, RefreshRequest.self, SendMessageCommand.self, ReceiptCommand<Delivered>.self,
            ReceiptCommand<Read>.self, ThreadsCommand.self, HistoryCommand.self, TypingCommand.self, ResumeCommand.self,
            SessionCreateCommand<Invite>.self, SessionCreateCommand<CallRequest>.self, SessionActCommand.self,
            SessionsCommand.self, RatingSubmitCommand.self, RatingSkipCommand.self, ChallengeCreateCommand.self,
            ChallengeCheckCommand.self, CheckInSubmitCommand.self, CheckInCommentCommand.self, MeasurementAddCommand.self,
            GoalSetCommand.self, RecordCommand.self, DashboardCommand.self, ChallengeTemplateCommand.self,
            MealsCommand.self, AppStateCommand.self, MessageEditCommand.self, MessageDeleteCommand.self,
            SessionFeedbackCommand.self, SessionFeedbackReadCommand.self,
            ChallengeJoinCommand.self, ChallengeLeaveCommand.self, ChallengeGroupsCommand.self, ActivityCommand.self,
            AvailabilitySetCommand.self, AvailabilityGetCommand.self, AvailabilitySlotsCommand.self,
            DailyCheckInSubmitCommand.self, DailyCheckInsCommand.self,
        ]
        return Dictionary(uniqueKeysWithValues: bodies.map { ($0.type, $0) })
    }()

    public typealias Decoded = (id: String, command: any SocketCommandBody)

    /// The command, or the error to reply with and the id to reply to (nil when the id itself is unusable).
    public static func decode(_ bytes: [UInt8]) -> Result<Decoded, DecodeFailure> {
        let decoded = FlatCommand.decode(bytes).map { Result<Decoded, DecodeFailure>.success($0) } ?? decodeGenerally(bytes)
        guard case .success(let command) = decoded else { return decoded }
        do {
            try command.command.checkRanges()
        } catch {
            return .failure(DecodeFailure(id: command.id, error: error))
        }
        return decoded
    }

    /// Every frame through `JSONDecoder` (the fast path's reference).
    static func decodeGenerally(_ bytes: [UInt8]) -> Result<Decoded, DecodeFailure> {
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
        var result: Result<Decoded, DecodeFailure>

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
                guard let type = try container.decodeIfPresent(String.self, forKey: AnyCodingKey("type")) else {
                    throw APIError(.missingField, field: "type")
                }
                guard let body = SocketCommand.catalog[type] else { throw APIError(.unknownCommand, field: "type") }
                try KnownFieldsCheck.check(decoder, body, extra: ["id", "type"])
                result = .success((id, try body.init(from: decoder)))
            } catch let error as APIError {
                result = .failure(DecodeFailure(id: id, error: error))
            } catch {
                result = .failure(DecodeFailure(id: id, error: APIError(wrappingDecoding: error)))
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
