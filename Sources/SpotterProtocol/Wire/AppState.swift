#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `app_state`: the app tells the server it went to the background (or came back) on a socket it keeps open. While
/// every socket a person holds on this server is in the background, they count as away for pushes: what the socket
/// still receives goes to their devices too (Protocol/README.md, "Notifications"). Presence (`online`) does not
/// change. `state`: `background` or `foreground` (a new socket starts in the foreground). The reply's result is
/// `{"state":…}`.
public struct AppStateCommand: Codable, Sendable, Equatable {
    public var state: String?
    public init(state: String?) {
        self.state = state
    }
    enum CodingKeys: String, CodingKey, CaseIterable { case state }

    /// The two states, as the wire spells them.
    public static let states: Set<String> = ["background", "foreground"]
}

extension AppStateCommand: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

extension AppStateCommand: SocketCommandBody {
    public static let type = "app_state"

    public static func flat(_ fields: FlatFields) -> AppStateCommand? {
        guard let state = fields.string("state") else { return nil }
        return AppStateCommand(state: state)
    }
}
