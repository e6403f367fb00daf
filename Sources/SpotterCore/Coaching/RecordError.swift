import FoundationEssentials
import SpotterProtocol

/// Why a change to the coaching record was refused.
public enum RecordError: Error, Equatable, Sendable {
    case missing(String)
    case outOfRange(String)
    case badValue(String)
    case notFound(String)
    /// A task checked before its day, or unchecked on another day than the one it was checked.
    case taskNotAllowed
    /// A measurement less than 7 days after the last: the next one is allowed from `nextAllowed`.
    case tooSoon(nextAllowed: Int64, now: Int64)
    /// A cutting target below the safe minimum for the sex.
    case unsafeGoal
    /// A goal before any measurement (it is measured against the newest one).
    case noMeasurement
    /// A group challenge (with a template) of another length than 7, 14 or 30 days.
    case challengeLength
    /// Already in an open challenge of the template.
    case alreadyJoined
    /// Leaving or checking a challenge that is over for the client (completed, ended or left).
    case challengeOver
    /// A new goal while one is active, without `replace`.
    case goalActive
}

extension APIError {
    public init(record error: RecordError) {
        switch error {
        case .missing(let field): self.init(.missingField, field: field)
        case .outOfRange(let field): self.init(.outOfRange, field: field)
        case .badValue(let field): self.init(.badRequest, field: field)
        case .notFound(let field): self.init(.recordNotFound, field: field)
        case .taskNotAllowed: self.init(.taskNotAllowed, field: "day")
        case .tooSoon(let next, let now): self.init(.measurementTooSoon, retryAfterSeconds: Int(max(1, next - now)))
        case .unsafeGoal: self.init(.unsafeGoal, field: "target_percent")
        case .noMeasurement: self.init(.conflict, field: "target_percent")
        case .challengeLength: self.init(.challengeLength, field: "tasks")
        case .alreadyJoined: self.init(.challengeAlreadyJoined, field: "template_id")
        case .challengeOver: self.init(.challengeOver, field: "challenge_id")
        case .goalActive: self.init(.goalActive, field: "replace")
        }
    }
}
