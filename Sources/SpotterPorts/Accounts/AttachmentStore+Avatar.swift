#if canImport(Glibc)
import Glibc
#endif

extension AttachmentStore {
    /// Removes the image kept under `digest` (an erased user's avatar), and its thumbnail, unless, asked again now, a user's avatar or
    /// an attachment names it (someone set the same image meanwhile). Answers whether the file was removed; a
    /// file already gone counts as removed. Blocking: call from a worker thread.
    @discardableResult
    public func removeAvatarFile(_ digest: String) throws -> Bool {
        guard Self.isDigest(digest) else { return false }
        let named = try engine.read { db in
            try db.fetchOne(#"SELECT 1 FROM "user" WHERE avatar = ?"#, [digest]) != nil
                || db.fetchOne("SELECT 1 FROM attachment WHERE id = ?", [digest]) != nil
        }
        guard !named else { return false }
        guard unlink(directory + "/" + digest) == 0 || errno == ENOENT else { throw AttachmentStoreError.io("unlink", errno) }
        guard unlink(thumbnailPath(digest)) == 0 || errno == ENOENT else { throw AttachmentStoreError.io("unlink", errno) }
        return true
    }
}
