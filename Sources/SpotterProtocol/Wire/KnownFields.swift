#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// One rule for every request body and socket command: a field the server
// does not know is refused with `unknown_field` naming it, never dropped in
// silence (a meal card's stray `text` would otherwise vanish). The schemas in
// Protocol/schemas say `additionalProperties: false` for the same reason.

/// A request body or command whose fields are all known. Objects nested in
/// it (a meal card) are checked too, through `nestedObjects`.
public protocol KnownFields: Decodable {
    /// The JSON keys this type reads.
    static var fieldNames: Set<String> { get }
    /// Keys whose values are objects with known fields of their own.
    static var nestedObjects: [String: any KnownFields.Type] { get }
}

extension KnownFields {
    public static var nestedObjects: [String: any KnownFields.Type] { [:] }
}

/// Decodes `T` after checking that the object has no keys but `T`'s (and
/// `extra`, the envelope's `id` and `type` for socket commands). Throws
/// `APIError(.unknownField, field: "meal.colour")` for the first unknown key,
/// in the order the decoder lists them.
public enum KnownFieldsCheck {
    public static func check(_ decoder: any Decoder, _ type: any KnownFields.Type, extra: Set<String> = [], path: String = "") throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        for key in container.allKeys where !type.fieldNames.contains(key.stringValue) && !extra.contains(key.stringValue) {
            throw APIError(.unknownField, field: path + key.stringValue)
        }
        for (name, nested) in type.nestedObjects {
            let key = AnyCodingKey(name)
            guard container.contains(key), try !container.decodeNil(forKey: key) else { continue }
            // A list of such objects (a challenge's tasks): each element is checked.
            if var list = try? container.nestedUnkeyedContainer(forKey: key) {
                while !list.isAtEnd { try check(try list.superDecoder(), nested, path: path + name + ".") }
                continue
            }
            try check(try container.superDecoder(forKey: key), nested, path: path + name + ".")
        }
    }
}

/// `T` decoded under the known-fields rule.
public struct Checked<T: KnownFields>: Decodable {
    public let value: T
    public init(from decoder: any Decoder) throws {
        try KnownFieldsCheck.check(decoder, T.self)
        value = try T(from: decoder)
    }
}

/// A coding key made from any string.
public struct AnyCodingKey: CodingKey, Hashable {
    public var stringValue: String
    public var intValue: Int? { nil }
    public init(_ string: String) { stringValue = string }
    public init?(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { nil }
}

// MARK: - The request types

extension SignUpRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension SignInRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension RefreshRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension OTPStartRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension OTPVerifyRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension APIKeyRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension SystemMessageRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension EmailChangeRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension EmailVerifyRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension EraseAccountRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension PasswordChangeRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension ProfileRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension TierRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension LanguageRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension OnboardingRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension CoachChoiceRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension ProvisionRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension MealLog: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension SendMessageCommand: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
    public static var nestedObjects: [String: any KnownFields.Type] { ["meal": MealLog.self] }
}
/// Shared by both receipts (a generic type cannot hold a static stored property).
private let receiptFieldNames = Set(ReceiptCommand<Read>.CodingKeys.allCases.map(\.stringValue))
extension ReceiptCommand: KnownFields {
    public static var fieldNames: Set<String> { receiptFieldNames }
}
extension HistoryCommand: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension TypingCommand: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension ResumeCommand: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

/// Shared by both create commands (a generic type cannot hold a static stored property).
private let sessionCreateFieldNames = Set(SessionCreateCommand<Invite>.CodingKeys.allCases.map(\.stringValue))
extension SessionCreateCommand: KnownFields {
    public static var fieldNames: Set<String> { sessionCreateFieldNames }
}
extension SessionActCommand: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension SessionsCommand: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

/// `me`: no fields of its own.
public struct MeCommand: KnownFields, Equatable, Sendable {
    public static let fieldNames: Set<String> = []
    public init() {}
    public init(from decoder: any Decoder) throws {}
}

/// `threads`: no fields of its own.
public struct ThreadsCommand: KnownFields, Equatable, Sendable {
    public static let fieldNames: Set<String> = []
    public init() {}
    public init(from decoder: any Decoder) throws {}
}
extension RatingSubmitCommand: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension RatingSkipCommand: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
