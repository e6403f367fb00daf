import SpotterProtocol

extension CoachingCore {
    /// `--tiers`: InBody scans are Premium's and up (seed 000 FR-PROGRESS-03, §4 "InBody Tracking: Freemium ❌ Upgrade
    /// prompt"); a Freemium client's is refused `plan_upgrade_required` on `method`, `upgrade_to` premium, before
    /// the scan is read. Without `--tiers` nobody is limited.
    mutating func checkInBodyAllowance(_ command: MeasurementAddCommand, of userID: String, _ context: CoreContext) throws(APIError) {
        guard command.method == "inbody", let meter = meter(userID, context), !meter.tier.inbody else { return }
        throw APIError(.planUpgradeRequired, field: "method", detail: .inbody)
    }
}
