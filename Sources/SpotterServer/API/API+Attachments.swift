import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// Chat attachments over HTTP: a thread's participant uploads a JPEG, PNG or PDF to the thread
/// (`POST /v1/threads/{id}/attachments`, the file as the body) and its participants download it
/// (`GET /v1/threads/{id}/attachments/{attachment id}`). With `--tiers` a client needs Smart Premium.
extension API {
    /// From the head: the caller takes part in the thread (`forbidden` otherwise), the thread is active and
    /// the caller's tier allows attachments; then, with the body on disk, its type and size, and the save.
    func admitAttachment(_ threadID: String, _ actor: Actor, _ language: Language) throws(APIError) -> UploadReceived {
        let thread = try attachmentThread(threadID, actor)
        guard thread.active else { throw APIError(.threadInactive, field: "thread_id") }
        if let refusal = server.runner.attachmentRefusal(actor.userID, field: nil) { throw refusal }
        return { [self] file, respond in
            let kind: AttachmentRules.Kind
            do {
                // The type from the first bytes; the size against the type's limit: refused before anything is kept.
                kind = try AttachmentRules.check(prefix: file.prefix, count: file.bytes)
            } catch {
                return respond(.apiError(APIError(wrapping: error), language))
            }
            let (attachments, uploader, clock) = (services.attachments, actor.userID, services.clock)
            run(status: 201, language, respond) { () -> AttachmentView in
                // An image's thumbnail first (`API+Thumbnails`): a decompression bomb is refused before it is kept.
                let thumbnail = kind == .pdf ? nil : try Thumbnails.make(fromUploadAt: file.path, attachments)
                let saved = try API.storing {
                    let saved = try attachments.saveFile(at: file.path, type: kind.rawValue, threadID: threadID, uploaderID: uploader,
                                                         now: clock.now)
                    if let thumbnail { try attachments.keepThumbnail(thumbnail.jpeg, of: saved.id) }
                    return saved
                }
                return AttachmentView(id: saved.id, type: saved.type, bytes: saved.bytes, thumbnailURL: attachments.hasThumbnail(saved.id)
                    ? AttachmentView.thumbnailURL(threadID: threadID, id: saved.id) : nil)
            }
        }
    }

    func download(_ threadID: String, _ id: String, _ actor: Actor, _ language: Language,
                  _ respond: @escaping Respond) throws(APIError) {
        afterReadingThread(threadID, language, respond) { [self] () throws(APIError) in
            try downloadRead(threadID, id, actor, language, respond)
        }
    }

    /// In a cluster, a thread this process does not hold yet (linked on another process a moment ago) is read
    /// from the store first, as the socket's commands do (`CoreRunner.mustReadThread`); then `next` runs, on the
    /// loop (a thread still unknown: `forbidden`, as alone). An upload's head waits the same way, before its body
    /// is read (`API+UploadAdmission`).
    func afterReadingThread(_ threadID: String, _ language: Language, _ respond: @escaping Respond,
                            _ next: @escaping () throws(APIError) -> Void) {
        let runner = server.runner
        guard runner.mustReadThread(threadID) else {
            do { try next() } catch { respond(.apiError(error, language)) }
            return
        }
        runner.readThread(threadID) { error in
            if let error { return respond(.apiError(error, language)) }
            do { try next() } catch { respond(.apiError(APIError(wrapping: error), language)) }
        }
    }

    private func downloadRead(_ threadID: String, _ id: String, _ actor: Actor, _ language: Language,
                              _ respond: @escaping Respond) throws(APIError) {
        _ = try attachmentThread(threadID, actor)
        let attachments = services.attachments
        server.loop.runBlocking({ blockingResult { try attachments.read(id: id, threadID: threadID) } }, then: { result in
            switch result {
            case .success(let found?):
                respond(HTTPResponse(status: 200, headers: [
                    ("Content-Type", found.type), ("Cache-Control", "private, max-age=31536000, immutable"),
                    ("X-Content-Type-Options", "nosniff"),
                ], body: found.contents))
            case .success(nil):
                respond(.apiError(APIError(.notFound, field: "id"), language))
            case .failure(let error):
                respond(.apiError(error, language))
            }
        })
    }

    /// The thread, if `actor` takes part in it (`forbidden` otherwise, as on the socket).
    private func attachmentThread(_ threadID: String, _ actor: Actor) throws(APIError) -> ChatThread {
        try server.runner.chat.participant(threadID, actor.userID).0
    }
}

extension API {
    /// The answer when the attachments' folder fails a write (shared storage away, full or read-only): 503
    /// `unavailable`, field `attachments`, `Retry-After: 1` — nothing was kept, a retry is right.
    static let attachmentsUnavailable = APIError(.unavailable, field: "attachments", retryAfterSeconds: 1)

    /// Runs `work`, which keeps files in the attachments' folder: a file operation that fails is `attachmentsUnavailable`.
    static func storing<T>(_ work: () throws -> T) throws -> T {
        do {
            return try work()
        } catch is AttachmentStoreError {
            throw attachmentsUnavailable
        }
    }
}
