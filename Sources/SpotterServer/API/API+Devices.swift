import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// Push devices (issue 28): an app registers where it can be reached while it holds no socket (an APNs or FCM token,
/// a browser's Web Push subscription), lists its account's devices and removes one. The rules are `DeviceRules`';
/// the store keeps at most ten per user and ties each to the session that registered it (its sign-out removes it).
extension API {
    /// `POST /v1/me/devices`: checked on the loop (pure), stored off it; 201 with the device, renewed or new.
    func registerDevice(_ request: HTTPRequest, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        let body = try JSON.decode(DeviceRequest.self, from: request.body)
        let address = try DeviceRules.check(body, allowLoopbackHTTP: server.config.development)
        let session = try verify(bearerToken(request)).claims.sessionID
        let (accounts, clock) = (services.accounts, services.clock)
        run(status: 201, language, respond) { () -> DeviceView in
            switch try accounts.registerDevice(id: SecureRandom.uuid(), userID: actor.userID, sessionID: session, address,
                                               now: clock.now) {
            case .registered(let device, _): return device.view
            case .sessionEnded: throw APIError(.sessionRevoked)
            }
        }
    }

    /// `GET /v1/me/devices`: the caller's devices, the most recently registered first.
    func listDevices(_ actor: Actor, _ language: Language, _ respond: @escaping Respond) {
        let accounts = services.accounts
        run(language, respond) { DeviceList(devices: try accounts.devices(userID: actor.userID).map(\.view)) }
    }

    /// `DELETE /v1/me/devices/{id}`: 204; `not_found` for an id that is not one of the caller's devices.
    func deleteDevice(_ id: String, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) {
        let accounts = services.accounts
        server.loop.runBlocking({ blockingResult { try accounts.deleteDevice(id: id, userID: actor.userID) } }, then: { result in
            switch result {
            case .success(true): respond(HTTPResponse(status: 204))
            case .success(false): respond(.apiError(APIError(.notFound, field: "id"), language))
            case .failure(let error): respond(.apiError(error, language))
            }
        })
    }
}

extension DeviceRecord {
    var view: DeviceView {
        DeviceView(id: id, platform: address.platform.rawValue, topic: address.topic, environment: address.environment,
                   createdAt: createdAt, registeredAt: registeredAt)
    }
}
