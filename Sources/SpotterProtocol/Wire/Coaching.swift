// Bodies of the onboarding, coach and admin endpoints.

/// `PUT /v1/me/onboarding`: a client's answers (seed 002 "Onboarding").
public struct OnboardingRequest: Codable, Sendable, Equatable {
    public var dateOfBirth: String?
    public var gender: String?
    public var heightCm: Double?
    public var weightKg: Double?
    public var goal: String?
    public var experienceLevel: String?
    public var dietaryRestrictions: [String]?
    public var medicalConditions: [String]?
    /// Seed 000 steps 4–7, all optional: "home" or "gym"; days a week (2…6); injuries (free text, "none" or an
    /// empty list for none).
    public var workoutLocation: String?
    public var workoutFrequency: Int?
    public var injuries: [String]?

    public init(dateOfBirth: String?, gender: String?, heightCm: Double?, weightKg: Double?, goal: String?,
                experienceLevel: String?, dietaryRestrictions: [String]?, medicalConditions: [String]?,
                workoutLocation: String? = nil, workoutFrequency: Int? = nil, injuries: [String]? = nil) {
        self.dateOfBirth = dateOfBirth
        self.gender = gender
        self.heightCm = heightCm
        self.weightKg = weightKg
        self.goal = goal
        self.experienceLevel = experienceLevel
        self.dietaryRestrictions = dietaryRestrictions
        self.medicalConditions = medicalConditions
        self.workoutLocation = workoutLocation
        self.workoutFrequency = workoutFrequency
        self.injuries = injuries
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case gender, goal, injuries
        case workoutLocation = "workout_location"
        case workoutFrequency = "workout_frequency"
        case dateOfBirth = "date_of_birth"
        case heightCm = "height_cm"
        case weightKg = "weight_kg"
        case experienceLevel = "experience_level"
        case dietaryRestrictions = "dietary_restrictions"
        case medicalConditions = "medical_conditions"
    }
}

/// A client's profile as they, their coach and admins see it.
public struct ClientProfileView: Codable, Sendable, Equatable {
    public var clientId: String
    public var dateOfBirth: String
    /// The client's age on the day the server answers; the store keeps only the date of birth (nil as it hands
    /// the profile over).
    public var age: Int?
    public var gender: String
    public var heightCm: Double
    public var weightKg: Double
    public var goal: String
    public var experienceLevel: String
    public var dietaryRestrictions: [String]
    public var medicalConditions: [String]
    /// Seed 000 steps 4–7: nil (absent on the wire) when not answered; injuries empty for none.
    public var workoutLocation: String?
    public var workoutFrequency: Int?
    public var injuries: [String]
    /// 0…100 from the experience level, the frequency and the injuries; nil without a frequency.
    public var fitnessScore: Int?

    public init(clientId: String, dateOfBirth: String, age: Int?, gender: String, heightCm: Double, weightKg: Double,
                goal: String, experienceLevel: String, dietaryRestrictions: [String], medicalConditions: [String],
                workoutLocation: String? = nil, workoutFrequency: Int? = nil, injuries: [String] = [],
                fitnessScore: Int? = nil) {
        self.clientId = clientId
        self.dateOfBirth = dateOfBirth
        self.age = age
        self.gender = gender
        self.heightCm = heightCm
        self.weightKg = weightKg
        self.goal = goal
        self.experienceLevel = experienceLevel
        self.dietaryRestrictions = dietaryRestrictions
        self.medicalConditions = medicalConditions
        self.workoutLocation = workoutLocation
        self.workoutFrequency = workoutFrequency
        self.injuries = injuries
        self.fitnessScore = fitnessScore
    }

    enum CodingKeys: String, CodingKey {
        case age, gender, goal, injuries
        case workoutLocation = "workout_location"
        case workoutFrequency = "workout_frequency"
        case fitnessScore = "fitness_score"
        case clientId = "client_id"
        case dateOfBirth = "date_of_birth"
        case heightCm = "height_cm"
        case weightKg = "weight_kg"
        case experienceLevel = "experience_level"
        case dietaryRestrictions = "dietary_restrictions"
        case medicalConditions = "medical_conditions"
    }
}

/// One entry of `GET /v1/coaches`.
public struct CoachView: Codable, Sendable, Equatable {
    public var id: String
    public var fullName: String?
    public var clientCount: Int
    /// Where the coach's avatar is read, if they have one (`UserView.avatarURL`).
    public var avatarURL: String?
    public init(id: String, fullName: String?, clientCount: Int, avatarURL: String? = nil) {
        self.id = id
        self.fullName = fullName
        self.clientCount = clientCount
        self.avatarURL = avatarURL
    }
    enum CodingKeys: String, CodingKey {
        case id
        case fullName = "full_name"
        case clientCount = "client_count"
        case avatarURL = "avatar_url"
    }
}

/// `POST /v1/me/coach` and `POST /v1/me/coach-change-requests`.
public struct CoachChoiceRequest: Codable, Sendable, Equatable {
    public var coachId: String?
    public var reason: String?
    public init(coachId: String?, reason: String? = nil) {
        self.coachId = coachId
        self.reason = reason
    }
    enum CodingKeys: String, CodingKey, CaseIterable {
        case reason
        case coachId = "coach_id"
    }
}

/// A coach–client link and the one conversation thread it comes with.
public struct LinkView: Codable, Sendable, Equatable {
    public var clientId: String
    public var coachId: String
    public var threadId: String
    public init(clientId: String, coachId: String, threadId: String) {
        self.clientId = clientId
        self.coachId = coachId
        self.threadId = threadId
    }
    enum CodingKeys: String, CodingKey {
        case clientId = "client_id"
        case coachId = "coach_id"
        case threadId = "thread_id"
    }
}

/// A client's request to change coach, decided by an admin.
public struct ChangeRequestView: Codable, Sendable, Equatable {
    public var id: String
    public var clientId: String
    public var fromCoachId: String
    public var toCoachId: String
    public var reason: String?
    /// `pending`, `approved` or `rejected`.
    public var status: String
    public var createdAt: Int64
    public var decidedAt: Int64?
    /// The people's names, in the admin's list (so an admin sees who, not ids); absent when a person has none.
    public var clientName: String?
    public var fromCoachName: String?
    public var toCoachName: String?

    public init(id: String, clientId: String, fromCoachId: String, toCoachId: String, reason: String?, status: String,
                createdAt: Int64, decidedAt: Int64?, clientName: String? = nil, fromCoachName: String? = nil,
                toCoachName: String? = nil) {
        self.id = id
        self.clientId = clientId
        self.fromCoachId = fromCoachId
        self.toCoachId = toCoachId
        self.reason = reason
        self.status = status
        self.createdAt = createdAt
        self.decidedAt = decidedAt
        self.clientName = clientName
        self.fromCoachName = fromCoachName
        self.toCoachName = toCoachName
    }

    enum CodingKeys: String, CodingKey {
        case id, reason, status
        case clientId = "client_id"
        case fromCoachId = "from_coach_id"
        case toCoachId = "to_coach_id"
        case createdAt = "created_at"
        case decidedAt = "decided_at"
        case clientName = "client_name"
        case fromCoachName = "from_coach_name"
        case toCoachName = "to_coach_name"
    }
}

/// One row of a coach's client list (seed 002 "Coach dashboard").
public struct ClientListingView: Codable, Sendable, Equatable {
    public var clientId: String
    public var fullName: String?
    public var goal: String?
    public var experienceLevel: String?
    public var age: Int?
    public var latestWeightKg: Double?
    public var threadId: String
    /// The client's subscription tier, when the server runs with `--tiers`.
    public var tier: String?
    /// Where the client's avatar is read, if they have one.
    public var avatarURL: String?

    public init(clientId: String, fullName: String?, goal: String?, experienceLevel: String?, age: Int?,
                latestWeightKg: Double?, threadId: String, tier: String? = nil, avatarURL: String? = nil) {
        self.clientId = clientId
        self.fullName = fullName
        self.goal = goal
        self.experienceLevel = experienceLevel
        self.age = age
        self.latestWeightKg = latestWeightKg
        self.threadId = threadId
        self.tier = tier
        self.avatarURL = avatarURL
    }

    enum CodingKeys: String, CodingKey {
        case goal, age, tier
        case avatarURL = "avatar_url"
        case clientId = "client_id"
        case fullName = "full_name"
        case experienceLevel = "experience_level"
        case latestWeightKg = "latest_weight_kg"
        case threadId = "thread_id"
    }
}

// MARK: - Load-test provisioning (admin only)

/// `POST /v1/admin/provision`: coaches with linked clients, for load tests.
public struct ProvisionRequest: Codable, Sendable, Equatable {
    public var coaches: Int?
    public var clientsPerCoach: Int?
    public var password: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case coaches, password
        case clientsPerCoach = "clients_per_coach"
    }
}

/// One provisioned account with a ready access token.
public struct ProvisionedAccount: Codable, Sendable, Equatable {
    public var id: String
    public var accessToken: String
    /// For clients: their coach and thread.
    public var coachId: String?
    public var threadId: String?
    public init(id: String, accessToken: String, coachId: String?, threadId: String?) {
        self.id = id
        self.accessToken = accessToken
        self.coachId = coachId
        self.threadId = threadId
    }
    enum CodingKeys: String, CodingKey {
        case id
        case accessToken = "access_token"
        case coachId = "coach_id"
        case threadId = "thread_id"
    }
}

public struct ProvisionResult: Codable, Sendable, Equatable {
    public var batch: String
    public var coaches: [ProvisionedAccount]
    public var clients: [ProvisionedAccount]
    public init(batch: String, coaches: [ProvisionedAccount], clients: [ProvisionedAccount]) {
        self.batch = batch
        self.coaches = coaches
        self.clients = clients
    }
}
