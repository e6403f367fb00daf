// Shared by the load tools: writing their results.
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A load tool's error: its description is what the tool prints.
public struct ToolError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Writes `bytes` to `path` (the whole file).
public func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { throw ToolError("cannot write \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard written == bytes.count else { throw ToolError("short write to \(path)") }
}

/// Writes `value` to `path` as the results files hold it: pretty-printed JSON, sorted snake_case keys, a final
/// newline.
public func writeJSON(_ value: some Encodable, to path: String) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    encoder.keyEncodingStrategy = .convertToSnakeCase
    var data = try encoder.encode(value)
    data.append(0x0A)
    try writeFile(path, Array(data))
}
