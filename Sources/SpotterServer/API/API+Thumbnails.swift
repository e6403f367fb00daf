import SpotterCore
import SpotterImages
import SpotterPorts
import SpotterProtocol
import WebSocket

/// Thumbnails of image attachments and avatars (issue 30 item 10, seed 002 "File Storage: automatic thumbnail
/// generation"): a JPEG of at most 256 × 256 made from every JPEG or PNG upload on the worker pool, right after the
/// upload arrives, kept beside its original (`AttachmentStore+Thumbnails`) and served beside it under the same access
/// rules and cache headers. An image whose header says more than 40 megapixels is refused (`image_too_large`) before it
/// is decoded or kept; one that cannot be read (damaged, CMYK) is kept without a thumbnail, as PDFs are.
enum Thumbnails {
    /// The thumbnail of the upload at `path`, read and decoded here (blocking): nil when the file is not an image this
    /// makes thumbnails of or cannot be read; `image_too_large` for a decompression bomb.
    static func make(fromUploadAt path: String, _ store: AttachmentStore) throws -> Thumbnail? {
        let contents = try store.uploadContents(at: path)
        do {
            return try Thumbnailer.thumbnail(of: contents)
        } catch {
            if case ImageError.tooLarge = error { throw APIError(.imageTooLarge, field: "body") }
            return nil
        }
    }

    static let headers: [(String, String)] = [
        ("Content-Type", "image/jpeg"), ("Cache-Control", "private, max-age=31536000, immutable"),
        ("X-Content-Type-Options", "nosniff"),
    ]
}

extension API {
    /// `GET /v1/threads/{id}/attachments/{attachment id}/thumbnail`: as the download, to the thread's participants
    /// (`forbidden` to anyone else); `not_found` for an attachment the thread does not have or one with no thumbnail.
    func downloadThumbnail(_ threadID: String, _ id: String, _ actor: Actor, _ language: Language,
                           _ respond: @escaping Respond) throws(APIError) {
        afterReadingThread(threadID, language, respond) { [self] () throws(APIError) in
            try thumbnailRead(threadID, id, actor, language, respond)
        }
    }

    private func thumbnailRead(_ threadID: String, _ id: String, _ actor: Actor, _ language: Language,
                               _ respond: @escaping Respond) throws(APIError) {
        _ = try server.runner.chat.participant(threadID, actor.userID)
        let attachments = services.attachments
        server.loop.runBlocking({ blockingResult { try attachments.thumbnail(id: id, threadID: threadID) } }, then: { result in
            switch result {
            case .success(let jpeg?): respond(HTTPResponse(status: 200, headers: Thumbnails.headers, body: jpeg))
            case .success(nil): respond(.apiError(APIError(.notFound, field: "id"), language))
            case .failure(let error): respond(.apiError(error, language))
            }
        })
    }

    /// `GET /v1/users/{id}/avatar/{digest}/thumbnail`: as the avatar, to those who may see it; `not_found` for a digest
    /// that is not the user's current avatar or an avatar with no thumbnail.
    func avatarThumbnail(_ userID: String, _ digest: String, _ actor: Actor, _ language: Language,
                         _ respond: @escaping Respond) {
        let (services, stored) = (self.services, server.runner.follower != nil)
        server.loop.runBlocking({
            blockingResult { () -> [UInt8] in
                guard try services.mayReadAvatar(userID, digest, actor, stored: stored), let jpeg = try services.attachments.thumbnail(of: digest) else {
                    throw APIError(.notFound, field: "id")
                }
                return jpeg
            }
        }, then: { result in
            switch result {
            case .success(let jpeg): respond(HTTPResponse(status: 200, headers: Thumbnails.headers, body: jpeg))
            case .failure(let error): respond(.apiError(error, language))
            }
        })
    }
}

extension APIServices {
    /// Whether `actor` may read the avatar `digest` of `userID` (blocking): `forbidden` is thrown before revealing
    /// whether the user exists (`AccessPolicy.canSeeAvatar`); false when `digest` is not the user's current avatar.
    /// `stored` (a cluster): the owner's row is read from the store, not the directory — the avatar is not in the
    /// log's account records, so another process's change would otherwise show only after a restart here.
    func mayReadAvatar(_ userID: String, _ digest: String, _ actor: Actor, stored: Bool) throws -> Bool {
        let owner = try stored ? accounts.storedUser(id: userID) : accounts.user(id: userID)
        let coachID = owner?.role == Role.client.rawValue ? try accounts.link(clientID: userID)?.coachId : nil
        guard AccessPolicy.canSeeAvatar(actor, ownerID: userID, ownerRole: owner.flatMap { Role(rawValue: $0.role) } ?? .client,
                                        ownerCoachID: coachID) else { throw APIError(.forbidden) }
        return owner?.avatar == digest
    }
}
