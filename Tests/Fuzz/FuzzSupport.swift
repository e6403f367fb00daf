// Compiled into every fuzz target (Tests/scripts/fuzz.sh): how a harness
// turns one input into a deterministic way to split it.

/// FNV-1a of the input: a stable source of choices made from the input itself,
/// so libFuzzer sees the same behaviour for the same bytes.
func fuzzFnv1a(_ bytes: [UInt8]) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in bytes {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01B3
    }
    return hash
}

/// Piece lengths summing to `size`, cut at `cuts` points drawn from `seed`.
func fuzzPieces(size: Int, cuts count: Int, seed: UInt64) -> [Int] {
    guard size > 0 else { return [0] }
    var hash = seed
    var cuts: [Int] = []
    for _ in 0..<count {
        hash = hash >> 17 ^ hash &* 0x9E37_79B9_7F4A_7C15
        cuts.append(Int(hash % UInt64(size + 1)))
    }
    cuts.sort()
    var pieces: [Int] = []
    var previous = 0
    for cut in cuts + [size] {
        pieces.append(cut - previous)
        previous = cut
    }
    return pieces
}
