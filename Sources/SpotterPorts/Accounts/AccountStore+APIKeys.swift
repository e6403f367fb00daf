/// A key another service of the app uses to call Spotter (the server-to-server API). Only the SHA-256 of the
/// key is stored; the key itself is shown once, when it is made.
public struct APIKeyRecord: Sendable, Equatable {
    public var id: String
    public var name: String
    public var createdBy: String
    public var createdAt: Int64
    public var revokedAt: Int64?
    /// What the key may do besides posting system messages (`tier`: set clients' tiers).
    public var scopes: [String] = []
}

extension AccountStore {
    public func createAPIKey(id: String, name: String, keyHash: String, createdBy: String, now: Int64,
                             scopes: [String] = []) throws -> APIKeyRecord {
        try write { db in
            try db.execute("""
                INSERT INTO apiKey (id, name, keyHash, createdBy, createdAt, scopes) VALUES (?, ?, ?, ?, ?, ?)
                """, [id, name, keyHash, createdBy, now, scopes.joined(separator: ",")])
            return APIKeyRecord(id: id, name: name, createdBy: createdBy, createdAt: now, revokedAt: nil, scopes: scopes)
        }
    }

    /// Every key, newest first, without secrets.
    public func apiKeys() throws -> [APIKeyRecord] {
        try read { db in
            try db.fetchAll("SELECT id, name, createdBy, createdAt, revokedAt, scopes FROM apiKey ORDER BY createdAt DESC, id")
                .map { APIKeyRecord(id: $0["id"], name: $0["name"], createdBy: $0["createdBy"], createdAt: $0["createdAt"],
                                    revokedAt: $0["revokedAt"], scopes: Self.scopes($0["scopes"])) }
        }
    }

    /// Revokes a key; false when there is no such key. Revoking twice keeps the first time.
    public func revokeAPIKey(id: String, now: Int64) throws -> Bool {
        try write { db in
            guard try db.fetchOne("SELECT 1 FROM apiKey WHERE id = ?", [id]) != nil else { return false }
            try db.execute("UPDATE apiKey SET revokedAt = ? WHERE id = ? AND revokedAt IS NULL", [now, id])
            return true
        }
    }

    /// The id of the live (not revoked) key with this hash, if any.
    public func apiKeyID(hash: String) throws -> String? {
        try read { db in
            try db.fetchValue("SELECT id FROM apiKey WHERE keyHash = ? AND revokedAt IS NULL", [hash])
        }
    }

    /// The live key with this hash and its scopes, if any.
    public func apiKey(hash: String) throws -> (id: String, scopes: [String])? {
        try read { db in
            try db.fetchOne("SELECT id, scopes FROM apiKey WHERE keyHash = ? AND revokedAt IS NULL", [hash])
                .map { ($0["id"], Self.scopes($0["scopes"])) }
        }
    }

    static func scopes(_ stored: String) -> [String] {
        stored.split(separator: ",").map(String.init)
    }

    // MARK: Idempotent service requests (`serviceRequest`)

    /// Claims `idempotencyKey` for key `keyID`'s request whose digest is `requestHash`. `.claimed`: the caller
    /// acts, then `finishServiceRequest` (or `dropServiceRequest` if it failed); `.done(answer)`: the same request
    /// was answered already; `.inProgress`: the same request is being acted on now; `.reused`: the key went with
    /// another request.
    public func claimServiceRequest(keyID: String, idempotencyKey: String, requestHash: String, now: Int64) throws -> ServiceRequestClaim {
        try write { db in
            try db.execute("""
                INSERT INTO serviceRequest (keyId, idempotencyKey, requestHash, response, createdAt) VALUES (?, ?, ?, '', ?)
                ON CONFLICT (keyId, idempotencyKey) DO NOTHING
                """, [keyID, idempotencyKey, requestHash, now])
            if db.changes > 0 { return .claimed }
            guard let row = try db.fetchOne("""
                SELECT requestHash, response, createdAt FROM serviceRequest WHERE keyId = ? AND idempotencyKey = ?
                """, [keyID, idempotencyKey]) else { return .inProgress }
            guard row["requestHash"] as String == requestHash else { return .reused }
            let response: String = row["response"]
            if !response.isEmpty { return .done(response) }
            // Claimed and never answered for `abandonedAfterSeconds`: the process died in between (the change may or
            // may not be logged). The retry takes the claim over and makes the change (again: the same tier).
            let claimedAt: Int64 = row["createdAt"]
            guard claimedAt <= now - Self.abandonedAfterSeconds else { return .inProgress }
            try db.execute("UPDATE serviceRequest SET createdAt = ? WHERE keyId = ? AND idempotencyKey = ? AND response = ''",
                           [now, keyID, idempotencyKey])
            return .claimed
        }
    }

    /// How long a claim without an answer holds a key before a retry may take it over.
    public static let abandonedAfterSeconds: Int64 = 30

    public func finishServiceRequest(keyID: String, idempotencyKey: String, response: String) throws {
        try write { db in
            try db.execute("UPDATE serviceRequest SET response = ? WHERE keyId = ? AND idempotencyKey = ?", [response, keyID, idempotencyKey])
        }
    }

    public func dropServiceRequest(keyID: String, idempotencyKey: String) throws {
        try write { db in
            try db.execute("DELETE FROM serviceRequest WHERE keyId = ? AND idempotencyKey = ? AND response = ''", [keyID, idempotencyKey])
        }
    }
}

public enum ServiceRequestClaim: Sendable, Equatable {
    case claimed
    case done(String)
    case inProgress
    case reused
}
