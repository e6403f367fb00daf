import GRDB

/// The "v2-accounts" migration: users, coaches, client profiles, weights, refresh tokens,
/// OTP challenges, coach–client links, threads and coach change requests.
///
/// Plain SQL that never changes once shipped; later changes go in new migrations.
/// Secrets are never stored in the clear: `refreshToken.tokenHash` and
/// `otpChallenge.codeDigest` hold SHA-256 hex digests, `user.passwordHash` an scrypt encoding.
enum AccountsSchema {
    static func migrate(_ db: Database) throws {
        try db.execute(sql: v2)
    }

    static let v2 = """
        CREATE TABLE "user" (
            id TEXT PRIMARY KEY NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('client', 'coach', 'admin')),
            fullName TEXT,
            email TEXT UNIQUE,
            phone TEXT UNIQUE,
            passwordHash TEXT,
            language TEXT NOT NULL DEFAULT 'en',
            onboardingCompleted INTEGER NOT NULL DEFAULT 0,
            createdAt INTEGER NOT NULL
        );

        CREATE TABLE coach (
            userId TEXT PRIMARY KEY NOT NULL REFERENCES "user"(id) ON DELETE CASCADE
        );

        CREATE TABLE clientProfile (
            userId TEXT PRIMARY KEY NOT NULL REFERENCES "user"(id) ON DELETE CASCADE,
            dateOfBirth TEXT NOT NULL,
            gender TEXT NOT NULL,
            heightCm REAL NOT NULL,
            weightKg REAL NOT NULL,
            goal TEXT NOT NULL,
            experienceLevel TEXT NOT NULL,
            dietaryRestrictions TEXT NOT NULL DEFAULT '[]',
            medicalConditions TEXT NOT NULL DEFAULT '[]',
            updatedAt INTEGER NOT NULL
        );

        CREATE TABLE weightEntry (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            clientId TEXT NOT NULL REFERENCES "user"(id) ON DELETE CASCADE,
            weightKg REAL NOT NULL,
            recordedAt INTEGER NOT NULL
        );
        CREATE INDEX weightEntry_clientId_recordedAt ON weightEntry(clientId, recordedAt);

        CREATE TABLE refreshToken (
            tokenHash TEXT PRIMARY KEY NOT NULL,
            userId TEXT NOT NULL REFERENCES "user"(id) ON DELETE CASCADE,
            familyId TEXT NOT NULL,
            createdAt INTEGER NOT NULL,
            expiresAt INTEGER NOT NULL,
            rotatedAt INTEGER,
            revokedAt INTEGER
        );
        CREATE INDEX refreshToken_familyId ON refreshToken(familyId);
        CREATE INDEX refreshToken_userId ON refreshToken(userId);

        CREATE TABLE otpChallenge (
            phone TEXT PRIMARY KEY NOT NULL,
            codeDigest TEXT NOT NULL,
            issuedAt INTEGER NOT NULL,
            failedAttempts INTEGER NOT NULL DEFAULT 0
        );

        CREATE TABLE coachClientLink (
            clientId TEXT PRIMARY KEY NOT NULL REFERENCES "user"(id) ON DELETE CASCADE,
            coachId TEXT NOT NULL REFERENCES coach(userId),
            createdAt INTEGER NOT NULL
        );
        CREATE INDEX coachClientLink_coachId ON coachClientLink(coachId);

        CREATE TABLE thread (
            id TEXT PRIMARY KEY NOT NULL,
            coachId TEXT NOT NULL REFERENCES "user"(id),
            clientId TEXT NOT NULL REFERENCES "user"(id),
            createdAt INTEGER NOT NULL,
            UNIQUE (coachId, clientId)
        );
        CREATE INDEX thread_clientId ON thread(clientId);

        CREATE TABLE coachChangeRequest (
            id TEXT PRIMARY KEY NOT NULL,
            clientId TEXT NOT NULL REFERENCES "user"(id),
            fromCoachId TEXT NOT NULL REFERENCES "user"(id),
            toCoachId TEXT NOT NULL REFERENCES "user"(id),
            reason TEXT,
            status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
            createdAt INTEGER NOT NULL,
            decidedAt INTEGER,
            decidedBy TEXT REFERENCES "user"(id)
        );
        CREATE UNIQUE INDEX coachChangeRequest_onePendingPerClient
            ON coachChangeRequest(clientId) WHERE status = 'pending';
        CREATE INDEX coachChangeRequest_status_createdAt ON coachChangeRequest(status, createdAt);
        """

    /// The "v15-devices" migration: push devices (issue 28). One row per address (`platform`, `token`: an APNs or
    /// FCM token, a Web Push endpoint), held by one user, tied to the session (refresh-token family) that registered
    /// it; `serial` orders a user's registrations (the least recent goes first past the limit).
    static let devices = """
        CREATE TABLE device (
            id TEXT PRIMARY KEY NOT NULL,
            userId TEXT NOT NULL REFERENCES "user"(id) ON DELETE CASCADE,
            sessionId TEXT NOT NULL,
            platform TEXT NOT NULL CHECK (platform IN ('apns', 'fcm', 'webpush')),
            token TEXT NOT NULL,
            topic TEXT,
            environment TEXT,
            p256dh TEXT,
            auth TEXT,
            createdAt INTEGER NOT NULL,
            registeredAt INTEGER NOT NULL,
            serial INTEGER NOT NULL,
            UNIQUE (platform, token)
        );
        CREATE INDEX device_userId ON device(userId, serial);
        CREATE INDEX device_sessionId ON device(sessionId);
        """

    /// The "v16-notifications" migration: notification preferences (issue 28). A user without a row has the
    /// defaults (everything on, no quiet hours); quiet hours are minutes after local midnight, both or neither. A
    /// muted thread has no message pushes until `mutedUntil` (NULL: until unmuted).
    static let notifications = """
        CREATE TABLE notificationPreference (
            userId TEXT PRIMARY KEY NOT NULL REFERENCES "user"(id) ON DELETE CASCADE,
            messages INTEGER NOT NULL DEFAULT 1,
            sessions INTEGER NOT NULL DEFAULT 1,
            reminders INTEGER NOT NULL DEFAULT 1,
            quietStart INTEGER,
            quietEnd INTEGER,
            updatedAt INTEGER NOT NULL
        );
        CREATE TABLE threadMute (
            userId TEXT NOT NULL REFERENCES "user"(id) ON DELETE CASCADE,
            threadId TEXT NOT NULL,
            mutedUntil INTEGER,
            ordinal INTEGER NOT NULL,
            PRIMARY KEY (userId, threadId)
        );
        """

    /// The "v17-reminder-channels" migration: where a user's session reminders go (issue 28, item 7), the channels
    /// in wire order joined by commas (`push`, `push,email`, `sms`…); rows saved before it are push only.
    static let reminderChannels = """
        ALTER TABLE notificationPreference ADD COLUMN reminderChannels TEXT NOT NULL DEFAULT 'push';
        """

    /// The "v18-push-outbox" migration: pushes decided and not yet done with (issue 28). One row per push to one
    /// device, id `pos:<record>:<device>`; `status` pending (waiting for `notBefore`, ms), sending (handed to a
    /// provider: set back to pending at start-up, so a push in flight at a crash goes again with the same id) or
    /// sent (kept an hour, for coalescing and badge updates). `pushCursor`: the newest record whose pushes are
    /// here, written in the same transaction, so a record handed over again makes no second push. No index holds
    /// `status` but as a partial index's condition: a row changes status three times (queued, claimed, done), and
    /// each index holding it was rewritten each time (the notify load scenario's write amplification).
    static let pushOutbox = """
        CREATE TABLE pushOutbox (
            id TEXT PRIMARY KEY NOT NULL,
            deviceId TEXT NOT NULL,
            userId TEXT NOT NULL,
            platform TEXT NOT NULL,
            threadId TEXT NOT NULL,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            title TEXT NOT NULL,
            body TEXT NOT NULL,
            quiet INTEGER NOT NULL,
            badge INTEGER NOT NULL,
            data TEXT NOT NULL,
            urgent INTEGER NOT NULL,
            expiresAt INTEGER NOT NULL,
            sender TEXT,
            language TEXT NOT NULL,
            count INTEGER NOT NULL,
            lastPos INTEGER NOT NULL,
            enqueuedAt INTEGER NOT NULL,
            notBefore INTEGER NOT NULL,
            attempts INTEGER NOT NULL,
            sentAt INTEGER
        );
        CREATE INDEX pushOutbox_due ON pushOutbox(platform, notBefore) WHERE status = 'pending';
        CREATE INDEX pushOutbox_device ON pushOutbox(deviceId, threadId, kind);
        CREATE INDEX pushOutbox_sent ON pushOutbox(sentAt) WHERE status = 'sent';
        CREATE TABLE pushCursor (
            name TEXT PRIMARY KEY NOT NULL,
            pos INTEGER NOT NULL
        );
        """

    /// Outbound webhooks (issue 29). `webhookEndpoint`: what an admin registered; `secret` is kept in the clear
    /// because every delivery is signed with it (it is never listed or logged). `webhookDelivery`: one row per
    /// event and endpoint subscribed, keyed by both; `ord` (position × 16 + the event's index in its record) orders
    /// an endpoint's deliveries; `status` pending (waiting, or being sent: nothing marks a send, so one in flight
    /// at a crash goes again) or dead (given up: the dead-letter list). A delivered row is deleted. `threadId` and
    /// `seq` find a message's deliveries when it is purged, `senderId` an erased sender's. `webhookCursor`: the newest record whose deliveries are
    /// here, written in the same transaction. Times are milliseconds, but `createdAt` (the event's, seconds).
    static let webhooks = """
        CREATE TABLE webhookEndpoint (
            id TEXT PRIMARY KEY NOT NULL,
            url TEXT NOT NULL,
            events TEXT NOT NULL,
            secret TEXT NOT NULL,
            createdBy TEXT NOT NULL,
            createdAt INTEGER NOT NULL
        );
        CREATE TABLE webhookDelivery (
            endpointId TEXT NOT NULL,
            eventId TEXT NOT NULL,
            eventType TEXT NOT NULL,
            ord INTEGER NOT NULL,
            threadId TEXT NOT NULL,
            seq INTEGER,
            senderId TEXT,
            createdAt INTEGER NOT NULL,
            payload TEXT NOT NULL,
            status TEXT NOT NULL,
            attempts INTEGER NOT NULL,
            enqueuedAt INTEGER NOT NULL,
            firstAttemptAt INTEGER,
            notBefore INTEGER NOT NULL,
            lastError TEXT,
            deadAt INTEGER,
            PRIMARY KEY (endpointId, eventId)
        );
        CREATE INDEX webhookDelivery_order ON webhookDelivery(endpointId, ord) WHERE status = 'pending';
        CREATE INDEX webhookDelivery_dead ON webhookDelivery(endpointId, ord) WHERE status = 'dead';
        CREATE INDEX webhookDelivery_message ON webhookDelivery(threadId, seq);
        CREATE INDEX webhookDelivery_sender ON webhookDelivery(senderId);
        CREATE TABLE webhookCursor (
            name TEXT PRIMARY KEY NOT NULL,
            pos INTEGER NOT NULL
        );
        """

    /// Tier changes from billing (issue 29). `apiKey.scopes`: what a key may do besides posting system messages,
    /// comma-separated (`tier`); keys made before have none. `serviceRequest`: a service's `Idempotency-Key` per
    /// key, with the SHA-256 of what it asked and the answer given, so a retry is answered alike and logs nothing.
    static let serviceTier = """
        ALTER TABLE apiKey ADD COLUMN scopes TEXT NOT NULL DEFAULT '';
        CREATE TABLE serviceRequest (
            keyId TEXT NOT NULL,
            idempotencyKey TEXT NOT NULL,
            requestHash TEXT NOT NULL,
            response TEXT NOT NULL,
            createdAt INTEGER NOT NULL,
            PRIMARY KEY (keyId, idempotencyKey)
        );
        """

    /// Onboarding fields of seed 000 steps 4–7 (issue 30): the workout location ("home"/"gym"), the days a week
    /// (2…6) and the injuries (a JSON list). All optional: profiles saved before them read as not answered.
    static let onboardingFields = """
        ALTER TABLE clientProfile ADD COLUMN workoutLocation TEXT;
        ALTER TABLE clientProfile ADD COLUMN workoutFrequency INTEGER;
        ALTER TABLE clientProfile ADD COLUMN injuries TEXT NOT NULL DEFAULT '[]';
        """
}
