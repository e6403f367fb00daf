import SpotterProtocol

/// What a chat attachment may be (seed 000 FR-MESSAGING-04): a JPEG or PNG image up to 5 MB, or a PDF up to
/// 10 MB. The type is read from the file's first bytes (its magic number), never from its name or a header.
public enum AttachmentRules {
    public enum Kind: String, Sendable, CaseIterable {
        case jpeg = "image/jpeg"
        case png = "image/png"
        case pdf = "application/pdf"

        /// The largest file of the kind, in bytes.
        public var maxBytes: Int { self == .pdf ? 10 * 1_048_576 : 5 * 1_048_576 }
    }

    /// The largest upload of any kind: a request announcing more is refused from its head.
    public static let maxBytes = 10 * 1_048_576

    /// The kind `bytes` begin with, or nil.
    public static func kind<Bytes: Collection<UInt8>>(of bytes: Bytes) -> Kind? {
        func starts(_ magic: [UInt8]) -> Bool { bytes.count >= magic.count && bytes.prefix(magic.count).elementsEqual(magic) }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("%PDF-".utf8)) { return .pdf }
        return nil
    }

    /// The upload's kind, or why it is refused: `unsupported_attachment` (not a JPEG, PNG or PDF, whatever its
    /// name), `payload_too_large` (over its kind's limit), `missing_field` (empty).
    public static func check<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(APIError) -> Kind {
        try check(prefix: bytes.prefix(16), count: bytes.count)
    }

    /// `check` for a file known by its first bytes (`prefix`, at least 8 of them when the file has that
    /// many) and its size: an upload streamed to disk.
    public static func check<Prefix: Collection<UInt8>>(prefix: Prefix, count: Int) throws(APIError) -> Kind {
        guard count > 0 else { throw APIError(.missingField, field: "body") }
        guard let kind = kind(of: prefix) else { throw APIError(.unsupportedAttachment, field: "body") }
        guard count <= kind.maxBytes else { throw APIError(.payloadTooLarge, field: "body") }
        return kind
    }
}
