import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// Onboarding, choosing a coach, coach changes (admin-approved), and what a
/// coach sees of their clients. Every handler checks role and relationship
/// through `AccessPolicy` before it touches data.
extension API {
    func saveOnboarding(_ request: HTTPRequest, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canActAsClient(actor) else { throw APIError(.forbidden) }
        let body = try JSON.decode(OnboardingRequest.self, from: request.body)
        let answers = try Onboarding.validate(body, today: services.clock.todayUTC)
        let services = self.services
        run(language, respond) { () -> ClientProfileView in
            let profile = ClientProfileView(clientID: actor.userID, answers: answers)
            try services.accounts.saveOnboarding(profile, now: services.clock.now)
            return profile.aged(today: services.clock.todayUTC)
        }
    }

    func clientProfile(_ clientID: String, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        let services = self.services
        run(language, respond) { () -> ClientProfileView in
            let coachID = try services.accounts.link(clientID: clientID)?.coachId
            // Deny before revealing whether the client exists.
            guard AccessPolicy.canAccessClientData(actor, ownerID: clientID, ownerCoachID: coachID) else {
                throw APIError(.forbidden)
            }
            guard let profile = try services.accounts.clientProfile(userID: clientID) else { throw APIError(.notFound) }
            return profile.aged(today: services.clock.todayUTC)
        }
    }

    func listCoaches(_ language: Language, _ respond: @escaping Respond) {
        let services = self.services
        run(language, respond) {
            try services.accounts.listCoaches().map {
                CoachView(id: $0.id, fullName: $0.fullName, clientCount: $0.clientCount,
                          avatarURL: UserView.avatarURL(userID: $0.id, avatar: $0.avatar))
            }
        }
    }

    func myCoach(_ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canActAsClient(actor) else { throw APIError(.forbidden) }
        let services = self.services
        run(language, respond) { () -> LinkView in
            guard let link = try services.accounts.link(clientID: actor.userID) else { throw APIError(.noCoachAssigned) }
            return link
        }
    }

    /// The first choice of coach is the client's own; a later change needs an admin.
    func pickCoach(_ request: HTTPRequest, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canActAsClient(actor) else { throw APIError(.forbidden) }
        guard let coachID = try JSON.decode(CoachChoiceRequest.self, from: request.body).coachId else {
            throw APIError(.missingField, field: "coach_id")
        }
        let (threadID, now, clientID) = (SecureRandom.uuid(), services.clock.now, actor.userID)
        let runner = server.runner
        runner.linkChange({ done in
            runner.log.createLink(clientID: clientID, coachID: coachID, threadID: threadID, now: now, completion: done)
        }, reply: { result in
            let mapped = result.mapError { error in
                error.code == .notFound ? APIError(.coachNotFound, field: "coach_id") : error
            }
            API.answer(status: 201, language, respond)(mapped)
        })
    }

    func requestChange(_ request: HTTPRequest, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canActAsClient(actor) else { throw APIError(.forbidden) }
        let body = try JSON.decode(CoachChoiceRequest.self, from: request.body)
        guard let coachID = body.coachId else { throw APIError(.missingField, field: "coach_id") }
        let reason = body.reason.map { String($0.prefix(500)) }
        let services = self.services
        run(status: 201, language, respond) { () -> ChangeRequestView in
            do {
                return try services.accounts.createChangeRequest(
                    id: SecureRandom.uuid(), clientID: actor.userID, toCoachID: coachID, reason: reason, now: services.clock.now)
            } catch AccountStoreError.notFound {
                throw APIError(.coachNotFound, field: "coach_id")
            }
        }
    }

    func listChangeRequests(_ request: HTTPRequest, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        let status = request.queryParameter("status")
        guard status == nil || ["pending", "approved", "rejected"].contains(status!) else {
            throw APIError(.badRequest, field: "status")
        }
        let services = self.services
        run(language, respond) { try services.accounts.changeRequests(status: status) }
    }

    /// The admin's list of users: newest first, by role if asked, a page at a time.
    func listUsers(_ request: HTTPRequest, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        let role = request.queryParameter("role")
        guard role == nil || Role(rawValue: role!) != nil else { throw APIError(.badRequest, field: "role") }
        func number(_ name: String, default value: Int, in range: ClosedRange<Int>) throws(APIError) -> Int {
            guard let text = request.queryParameter(name) else { return value }
            guard let number = Int(text), range.contains(number) else { throw APIError(.outOfRange, field: name) }
            return number
        }
        let limit = try number("limit", default: 50, in: 1...200)
        let offset = try number("offset", default: 0, in: 0...Int(Int32.max))
        let services = self.services
        run(language, respond) { () -> UserListView in
            let page = try services.accounts.listUsers(role: role, limit: limit, offset: offset)
            return UserListView(users: page.users.map(\.view), total: page.total)
        }
    }

    func decideChange(id: String, approve: Bool, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        let (threadID, now, adminID) = (SecureRandom.uuid(), services.clock.now, actor.userID)
        let runner = server.runner
        runner.linkChange({ done in
            runner.log.decideChange(requestID: id, approve: approve, adminID: adminID, threadID: threadID, now: now, completion: done)
        }, reply: { result in
            API.answer(status: 200, language, respond)(result)
        })
    }

    /// Load-test setup (admin only): up to 20,000 accounts per call, all
    /// sharing one password, each returned with an access token so that
    /// thousands of sockets can connect without thousands of sign-ins.
    func provision(_ request: HTTPRequest, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        let body = try JSON.decode(ProvisionRequest.self, from: request.body)
        guard let coaches = body.coaches else { throw APIError(.missingField, field: "coaches") }
        let perCoach = body.clientsPerCoach ?? 1
        guard (1...20_000).contains(coaches) else { throw APIError(.outOfRange, field: "coaches") }
        guard (0...1000).contains(perCoach), coaches * (perCoach + 1) <= 20_000 else {
            throw APIError(.outOfRange, field: "clients_per_coach")
        }
        let password = body.password ?? SecureRandom.token()
        try AccountRules.checkPassword(password, confirmation: password)
        let services = self.services
        let runner = server.runner
        server.loop.runBlocking({ blockingResult { () -> ProvisionResult in
            let now = services.clock.now
            let batch = String(SecureRandom.uuid().prefix(8))
            let created = try services.accounts.provisionLoadAccounts(
                batch: batch, coaches: coaches, clientsPerCoach: perCoach, passwordHash: services.hasher.hash(password),
                now: now, makeID: { SecureRandom.uuid() })
            func token(_ id: String, _ role: Role) -> String {
                services.signer.sign(AccessClaims(
                    subject: id, role: role, sessionID: "provisioned-" + batch, issuedAt: now, expiresAt: now + services.accessLifetime))
            }
            return ProvisionResult(
                batch: batch,
                coaches: created.map { ProvisionedAccount(id: $0.coachID, accessToken: token($0.coachID, .coach), coachId: nil, threadId: nil) },
                clients: created.flatMap { coach in
                    coach.clients.map {
                        ProvisionedAccount(id: $0.clientID, accessToken: token($0.clientID, .client), coachId: coach.coachID, threadId: $0.threadID)
                    }
                })
        } }, then: { result in
            // The threads were made outside the log: the chat state reads them before anyone can use them.
            let threads = (try? result.get())?.clients.compactMap(\.threadId) ?? []
            runner.threadsCreated(threads) { API.answer(status: 201, language, respond)(result) }
        })
    }

    func coachClients(_ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canListOwnClients(actor) else { throw APIError(.forbidden) }
        let services = self.services
        let today = services.clock.todayUTC
        let tiers = server.config.tiers
        run(language, respond) {
            try services.accounts.clients(ofCoach: actor.userID).map { row in
                let user = try services.accounts.user(id: row.clientId)
                return ClientListingView(
                    clientId: row.clientId, fullName: row.fullName, goal: row.goal, experienceLevel: row.experienceLevel,
                    age: row.dateOfBirth.flatMap { Onboarding.age(dateOfBirth: $0, today: today) },
                    latestWeightKg: row.latestWeightKg, threadId: row.threadId,
                    tier: tiers ? user?.tier : nil, avatarURL: UserView.avatarURL(userID: row.clientId, avatar: user?.avatar))
            }
        }
    }
}

extension ClientProfileView {
    /// The profile as answered: with the client's age as of `today` ("YYYY-MM-DD") and the fitness score of the
    /// stored answers; the store keeps the date of birth and the answers only.
    func aged(today: String) -> ClientProfileView {
        var answered = self
        answered.age = Onboarding.age(dateOfBirth: dateOfBirth, today: today)
        answered.fitnessScore = ExperienceLevel(rawValue: experienceLevel).flatMap {
            FitnessProfile.score(experience: $0, frequency: workoutFrequency, injuryCount: injuries.count)
        }
        return answered
    }
}
