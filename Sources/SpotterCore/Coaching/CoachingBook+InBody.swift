import SpotterProtocol

/// InBody scans (seed 000 FR-PROGRESS-03, Premium and up; the gate is `CoachingCore.checkInBodyAllowance`): a
/// measurement whose body fat is the scan's own, not computed. Each figure is checked against what a body and an
/// InBody printout can show; one outside is `out_of_range` naming it (`inbody.weight_kg`).
extension CoachingBook {
    /// The ranges accepted, by wire name. Masses in kg, water in litres, the BMR in kcal a day.
    static let inbodyRanges: [String: ClosedRange<Double>] = [
        "weight_kg": 20...400, "body_fat_percent": 3...69, "skeletal_muscle_mass_kg": 5...150,
        "visceral_fat_level": 1...30, "body_water_percent": 20...80, "body_fat_mass_kg": 0.5...300,
        "lean_body_mass_kg": 10...350, "total_body_water_l": 5...150, "protein_kg": 1...50, "minerals_kg": 0.5...15,
        "basal_metabolic_rate_kcal": 500...5000, "bmi": 8...100, "inbody_score": 0...100,
    ]

    /// The scan as kept and its body fat; `missing` for a required figure left out, `out_of_range` for one outside
    /// its range or a part heavier than the whole body.
    static func inbodyScan(_ command: MeasurementAddCommand) throws(RecordError) -> (InBodyScan, Double) {
        guard let scan = command.inbody else { throw .missing("inbody") }
        if command.skinfoldsMm != nil { throw .badValue("skinfolds_mm") }
        func check(_ value: Double?, _ name: String, required: Bool = false) throws(RecordError) {
            guard let value else {
                if required { throw .missing("inbody." + name) }
                return
            }
            guard value.isFinite, let range = inbodyRanges[name], range.contains(value) else { throw .outOfRange("inbody." + name) }
        }
        try check(scan.weightKg, "weight_kg", required: true)
        try check(scan.bodyFatPercent, "body_fat_percent", required: true)
        try check(scan.skeletalMuscleMassKg, "skeletal_muscle_mass_kg", required: true)
        try check(scan.visceralFatLevel.map(Double.init), "visceral_fat_level", required: true)
        try check(scan.bodyWaterPercent, "body_water_percent", required: true)
        try check(scan.bodyFatMassKg, "body_fat_mass_kg")
        try check(scan.leanBodyMassKg, "lean_body_mass_kg")
        try check(scan.totalBodyWaterL, "total_body_water_l")
        try check(scan.proteinKg, "protein_kg")
        try check(scan.mineralsKg, "minerals_kg")
        try check(scan.basalMetabolicRateKcal.map(Double.init), "basal_metabolic_rate_kcal")
        try check(scan.bmi, "bmi")
        try check(scan.inbodyScore.map(Double.init), "inbody_score")
        // The parts of a body weigh less than the body.
        let weight = scan.weightKg!
        for (part, name) in [(scan.skeletalMuscleMassKg, "skeletal_muscle_mass_kg"), (scan.bodyFatMassKg, "body_fat_mass_kg"),
                             (scan.leanBodyMassKg, "lean_body_mass_kg")] {
            if let part, part >= weight { throw .outOfRange("inbody." + name) }
        }
        return (scan, scan.bodyFatPercent!)
    }
}
