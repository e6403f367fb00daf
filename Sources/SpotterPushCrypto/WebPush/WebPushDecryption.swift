/// The browser's side of RFC 8291: reading an `aes128gcm` push message with the subscription's private key.
/// The server never needs it to send; the local push-service stand-in and the tests do, to check what was sent.
extension WebPushEncryption {
    /// The plaintext of `body`, a push message for the subscription whose private key is `receiverKey` and auth
    /// secret `authSecret`. Reads any number of records (RFC 8188), not only the one `encrypt` writes.
    ///
    /// Throws `.malformedMessage` for a header that is cut short, names a key id that is not a 65-byte P-256
    /// point (Web Push's only kind) or a record size below 18, or records not delimited as RFC 8188 §2 says;
    /// `.decryptionFailed` for a record that does not authenticate.
    public static func decrypt(
        _ body: [UInt8], receiverKey: P256PrivateKey, authSecret: [UInt8]
    ) throws(PushCryptoError) -> [UInt8] {
        guard body.count >= 21 else { throw .malformedMessage("shorter than its header") }
        let salt = Array(body[0..<16])
        let recordSize = Int(body[16]) << 24 | Int(body[17]) << 16 | Int(body[18]) << 8 | Int(body[19])
        let keyIDLength = Int(body[20])
        // The smallest record holds a tag, a delimiter and one byte (RFC 8188 §2: "less than 18 is invalid").
        guard recordSize >= 18 else { throw .malformedMessage("record size \(recordSize) below 18") }
        guard keyIDLength == 65, body.count >= 21 + keyIDLength else {
            throw .malformedMessage("the key id is not a 65-byte public key")
        }
        let senderPublic = Array(body[21..<(21 + keyIDLength)])
        let sender: P256PublicKey
        do { sender = try P256PublicKey(uncompressed: senderPublic) } catch {
            throw .malformedMessage("the key id is not a P-256 point")
        }
        let keys = ContentKeys(
            ecdhSecret: receiverKey.sharedSecret(with: sender), authSecret: authSecret,
            receiverPublic: receiverKey.publicKey.uncompressed, senderPublic: senderPublic, salt: salt)

        let records = body[(21 + keyIDLength)...]
        guard !records.isEmpty else { throw .malformedMessage("no records") }
        var plaintext: [UInt8] = []
        var start = records.startIndex
        var number: UInt64 = 0
        while start < records.endIndex {
            let end = min(start + recordSize, records.endIndex)
            let isLast = end == records.endIndex
            guard let opened = AES128GCM.open(records[start..<end], key: keys.contentKey, nonce: keys.nonce(record: number)) else {
                throw .decryptionFailed
            }
            plaintext += try unpadded(opened, isLast: isLast)
            start = end
            number += 1
        }
        return plaintext
    }

    /// A record's data without its padding: the trailing zeros, then the delimiter, which must be 0x02 in the last
    /// record and 0x01 in the others.
    private static func unpadded(_ record: [UInt8], isLast: Bool) throws(PushCryptoError) -> ArraySlice<UInt8> {
        guard let delimiterIndex = record.lastIndex(where: { $0 != 0 }) else {
            throw .malformedMessage("a record of padding only")
        }
        let expected = isLast ? lastRecordDelimiter : recordDelimiter
        guard record[delimiterIndex] == expected else {
            throw .malformedMessage(isLast ? "the last record's delimiter is not 0x02" : "a record's delimiter is not 0x01")
        }
        return record[..<delimiterIndex]
    }
}
