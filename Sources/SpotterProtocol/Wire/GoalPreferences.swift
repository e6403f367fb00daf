#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The user's goal preferences (seed 004 US2 "preferred body fat calculation method", US8 #4, FR-027 "preference
/// for measurement units"): `GET`/`PUT /v1/me/goal-preferences`. `body_fat_method` (`navy`, `skinfold3`,
/// `skinfold7`; null: none chosen) is the method `measurement.add` uses when it names none — a change applies to
/// future measurements only; `units` (`metric`, the default, or `imperial`) is how the app shows numbers and the
/// unit `check_in.submit` reads a weight in when it names none. The server stores and answers SI (kg, cm) always.
public struct GoalPreferencesView: Codable, Sendable, Equatable {
    public var bodyFatMethod: String?
    public var units: String
    public init(bodyFatMethod: String?, units: String) {
        self.bodyFatMethod = bodyFatMethod
        self.units = units
    }
    enum CodingKeys: String, CodingKey {
        case units
        case bodyFatMethod = "body_fat_method"
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(bodyFatMethod, forKey: .bodyFatMethod)  // null when none is chosen
        try container.encode(units, forKey: .units)
    }

    public static let methods: Set<String> = ["navy", "skinfold3", "skinfold7"]
    public static let unitSystems: Set<String> = ["metric", "imperial"]
    public static let defaults = GoalPreferencesView(bodyFatMethod: nil, units: "metric")
}

/// `PUT /v1/me/goal-preferences`: either field (absent: unchanged; `body_fat_method` null: none).
public struct GoalPreferencesRequest: Codable, Sendable, Equatable, KnownFields {
    public init() {}
    /// nil: not given; `.some(nil)`: null.
    public var bodyFatMethod: String??
    public var units: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case units
        case bodyFatMethod = "body_fat_method"
    }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        units = try container.decodeIfPresent(String.self, forKey: .units)
        if container.contains(.bodyFatMethod) {
            bodyFatMethod = .some(try container.decodeNil(forKey: .bodyFatMethod) ? nil : try container.decode(String.self, forKey: .bodyFatMethod))
        }
    }
}
