#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An InBody scan's figures (seed 000 FR-PROGRESS-03, Premium and up), as the client copies them from the printout:
/// a measurement with `method: "inbody"` carries them under `inbody`. The first five are required (the list the
/// seed shows for each scan); the rest complete the seed's "12 metrics" and may be left out.
public struct InBodyScan: Codable, Sendable, Equatable, KnownFields {
    public var weightKg: Double?
    public var bodyFatPercent: Double?
    public var skeletalMuscleMassKg: Double?
    public var visceralFatLevel: Int?
    public var bodyWaterPercent: Double?
    public var bodyFatMassKg: Double?
    public var leanBodyMassKg: Double?
    public var totalBodyWaterL: Double?
    public var proteinKg: Double?
    public var mineralsKg: Double?
    public var basalMetabolicRateKcal: Int?
    public var bmi: Double?
    public var inbodyScore: Int?
    public init() {}
    enum CodingKeys: String, CodingKey, CaseIterable {
        case bmi
        case weightKg = "weight_kg"
        case bodyFatPercent = "body_fat_percent"
        case skeletalMuscleMassKg = "skeletal_muscle_mass_kg"
        case visceralFatLevel = "visceral_fat_level"
        case bodyWaterPercent = "body_water_percent"
        case bodyFatMassKg = "body_fat_mass_kg"
        case leanBodyMassKg = "lean_body_mass_kg"
        case totalBodyWaterL = "total_body_water_l"
        case proteinKg = "protein_kg"
        case mineralsKg = "minerals_kg"
        case basalMetabolicRateKcal = "basal_metabolic_rate_kcal"
        case inbodyScore = "inbody_score"
    }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

extension MeasurementAddCommand {
    /// An unknown key inside `inbody` is refused like one beside it (`unknown_field`, `inbody.…`).
    public static var nestedObjects: [String: any KnownFields.Type] { ["inbody": InBodyScan.self] }
}
