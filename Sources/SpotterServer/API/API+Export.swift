import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// `GET /v1/me/export` (issue 29, item 2): everything the server holds about the signed-in user, as one tar archive
/// streamed while it is read (`ExportArchive`). The layout, and what is left out and why, are in Protocol/README.md.
extension API {
    /// Exports streaming at once, server-wide: each holds a pool thread while it makes a piece and reads the whole
    /// of a user's history, so a few at a time keep the pool for everything else. One per user.
    static let maxExportsInFlight = 4

    /// Decided on the loop from the head: the bearer token (401), one export per user (429 `rate_limited`), room
    /// under `maxExportsInFlight` (429 `server_busy`); then the archive streams.
    func exportRoute(_ request: HTTPRequest, _ language: Language) -> Server.Route {
        guard request.method == "GET" else {
            return .respond(.apiError(APIError(.methodNotAllowed), language, headers: [("Allow", "GET")]))
        }
        do throws(APIError) {
            let actor = try authenticate(request)
            guard !exportsInFlight.contains(actor.userID) else { throw APIError(.rateLimited, retryAfterSeconds: 10) }
            guard exportsInFlight.count < Self.maxExportsInFlight else { throw APIError(.serverBusy, retryAfterSeconds: 10) }
            exportsInFlight.insert(actor.userID)
            return .stream(ExportArchive(loop: server.loop, userID: actor.userID, prepare: { [self] done in prepareExport(actor, done) },
                                         released: { [weak self] in self?.exportsInFlight.remove(actor.userID) }))
        } catch {
            return .respond(.apiError(error, language))
        }
    }

    /// The export's cursor: the user's threads as the store lists them, each loaded into this process first if it
    /// does not hold it yet (a process of a cluster holds the threads its sockets used), then the loop's views copied.
    private func prepareExport(_ actor: Actor, _ done: @escaping (Result<ExportCursor, any Error>) -> Void) {
        let (accounts, runner) = (services.accounts, server.runner)
        server.loop.runBlocking({ Result { try accounts.threadIDs(ofUser: actor.userID) } }, then: { listed in
            switch listed {
            case .failure(let error): done(.failure(error))
            case .success(let ids): load(ids.filter(runner.mustReadThread)[...])
            }
        })
        func load(_ missing: ArraySlice<String>) {
            guard let first = missing.first else {
                // Threads this process let go (no socket of theirs here) are brought up to date (`CoreRunner+Interest`).
                return runner.refresh(runner.chat.threads(of: actor.userID).map(\.no)) { error in
                    if let error { return done(.failure(error)) }
                    snapshot()
                }
            }
            runner.readThread(first) { error in
                if let error { return done(.failure(error)) }
                load(missing.dropFirst())
            }
        }
        func snapshot() {
            let snapshot = ExportSnapshot(actor: actor, core: runner.core, context: runner.context())
            let sources = ExportSources(accounts: services.accounts, attachments: services.attachments, log: runner.log,
                                        now: services.clock.now)
            done(.success(ExportCursor(sources: sources, snapshot: snapshot)))
        }
    }
}
