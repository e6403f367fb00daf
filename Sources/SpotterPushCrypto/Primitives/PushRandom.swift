import COpenSSL

/// Random bytes from OpenSSL's CSPRNG (`RAND_bytes`), for a Web Push message's salt. Traps if OpenSSL cannot
/// provide them: a predictable salt would be worse than stopping.
enum PushRandom {
    static func bytes(_ count: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let ok = buffer.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
        precondition(ok == 1, "OpenSSL RAND_bytes failed")
        return buffer
    }
}
