/// The subjects one deployment's processes talk on: `<prefix>.user.<token>`, `<prefix>.presence` and
/// `<prefix>.log`. Two deployments pointed at one NATS server see each other's users, presence and records
/// unless their prefixes differ (a follower applying another database's records runs its memory past its own
/// log). The prefix is one or more tokens of `[A-Za-z0-9_-]` joined by '.', at most `maximumPrefixBytes`: no
/// wildcard, no whitespace, no empty token, so one deployment's subjects can never match another's.
public struct NATSSubjects: Sendable, Equatable {
    public static let defaultPrefix = "spotter"
    public static let maximumPrefixBytes = 64
    public static let standard = NATSSubjects(prefix: defaultPrefix)!

    public let prefix: String
    let presence: String
    let log: String
    let userPrefix: String

    /// nil for a prefix that is not tokens of `[A-Za-z0-9_-]` joined by single dots, or is longer than 64 bytes.
    public init?(prefix: String) {
        guard prefix.utf8.count <= Self.maximumPrefixBytes,
              prefix.split(separator: ".", omittingEmptySubsequences: false).allSatisfy(NATSWire.isPlain) else { return nil }
        self.prefix = prefix
        presence = prefix + ".presence"
        log = prefix + ".log"
        userPrefix = prefix + ".user."
    }

    func subject(userID: String) -> String { userPrefix + NATSWire.token(userID) }

    /// The user a subject of this deployment names; nil for anything else (another prefix, presence, the log).
    func userID(subject: String) -> String? {
        guard subject.hasPrefix(userPrefix) else { return nil }
        return NATSWire.userID(token: subject.dropFirst(userPrefix.count))
    }
}
