#if canImport(Glibc)
import Glibc
#endif

/// Thumbnails beside their originals: the thumbnail of the file kept under a digest is `<digest>.thumbnail` (a JPEG) in
/// the same folder, so whatever names the original names its thumbnail, and the purge removes both together
/// (`removeUnnamedFiles`). Made once per original (the same file uploaded again finds it there). The server makes
/// them (`SpotterImages`); this only keeps and reads them. Blocking: call from a worker thread.
extension AttachmentStore {
    static let thumbnailSuffix = ".thumbnail"

    func thumbnailPath(_ digest: String) -> String {
        directory + "/" + digest + Self.thumbnailSuffix
    }

    /// The digest a kept file belongs to: its own name for an original, its original's for a thumbnail; nil for
    /// anything else (a partial write, the uploads' folder).
    static func owningDigest(_ name: String) -> String? {
        if isDigest(name) { return name }
        guard name.hasSuffix(thumbnailSuffix) else { return nil }
        let digest = String(name.dropLast(thumbnailSuffix.count))
        return isDigest(digest) ? digest : nil
    }

    /// Keeps `jpeg` as the thumbnail of the file kept under `digest` (durably, once).
    public func keepThumbnail(_ jpeg: [UInt8], of digest: String) throws {
        guard Self.isDigest(digest) else { return }
        try Self.makeDirectory(directory)
        let path = thumbnailPath(digest)
        if access(path, F_OK) != 0 { try Self.writeDurably(jpeg, to: path) }
    }

    /// Whether the file kept under `digest` has a thumbnail.
    public func hasThumbnail(_ digest: String) -> Bool {
        Self.isDigest(digest) && access(thumbnailPath(digest), F_OK) == 0
    }

    /// The thumbnail of the file kept under `digest`, or nil if it has none. The caller checks who may read it.
    public func thumbnail(of digest: String) throws -> [UInt8]? {
        guard hasThumbnail(digest) else { return nil }
        return try Self.readFile(thumbnailPath(digest))
    }

    /// The thumbnail of attachment `id` of `threadID`, or nil if the thread has no such attachment or it has no
    /// thumbnail.
    public func thumbnail(id: String, threadID: String) throws -> [UInt8]? {
        guard Self.isDigest(id), try engine.read({ db in
            try db.fetchOne("SELECT 1 FROM attachment WHERE id = ? AND threadId = ?", [id, threadID]) != nil
        }) else { return nil }
        return try thumbnail(of: id)
    }

    /// The whole of an upload still at `path` (≤ the upload limit: it is read to make its thumbnail).
    public func uploadContents(at path: String) throws -> [UInt8] {
        try Self.readFile(path)
    }
}
