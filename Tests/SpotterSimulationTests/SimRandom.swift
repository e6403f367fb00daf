/// The simulator's one source of chance: SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
/// generators", 2014), written here so that a seed means the same schedule on every platform and Swift version
/// (the standard library's `random(in:using:)` may change how it draws). Every choice of a run comes from it, in
/// order: the same seed gives the same run.
struct SimRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// 0..<bound (a bound of 0 or less gives 0). The modulo's bias is below 2^-40 for the bounds used here.
    mutating func below(_ bound: Int) -> Int {
        bound <= 1 ? 0 : Int(next() % UInt64(bound))
    }

    /// A number in `range`.
    mutating func within(_ range: ClosedRange<Int64>) -> Int64 {
        range.lowerBound + Int64(below(Int(range.upperBound - range.lowerBound) + 1))
    }

    /// True `percent` times in 100.
    mutating func percent(_ percent: Int) -> Bool { below(100) < percent }

    mutating func pick<T>(_ items: [T]) -> T? {
        items.isEmpty ? nil : items[below(items.count)]
    }
}

/// FNV-1a over the trace: two runs of one seed must give the same hash.
struct TraceHash {
    private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    mutating func add(_ line: String) {
        for byte in line.utf8 {
            value ^= UInt64(byte)
            value &*= 0x0000_0100_0000_01B3
        }
        value ^= 0x0A
        value &*= 0x0000_0100_0000_01B3
    }
}
