import FoundationEssentials
import SpotterProtocol

extension AccountStore {
    /// Saves a coach's availability whole (replacing what was saved), through the one writer. The body is the
    /// wire's JSON (`AvailabilityView`), checked by the caller before.
    public func setAvailability(coachID: String, _ availability: AvailabilityView, now: Int64) throws {
        let body = String(decoding: try JSONEncoder().encode(availability), as: UTF8.self)
        try write { db in
            try db.execute("DELETE FROM availability WHERE coachId = ?", [coachID])
            try db.execute("INSERT INTO availability (coachId, body, updatedAt) VALUES (?, ?, ?)", [coachID, body, now])
        }
    }

    /// A coach's saved availability; nil when none was saved (or the row cannot be read as one).
    public func availability(coachID: String) throws -> AvailabilityView? {
        let body: String? = try read { db in
            try db.fetchOne("SELECT body FROM availability WHERE coachId = ?", [coachID]).map { row in row["body"] }
        }
        guard let body else { return nil }
        return try? JSONDecoder().decode(AvailabilityView.self, from: Data(body.utf8))
    }
}
