import Foundation
import Synchronization

/// Runs an asynchronous store call and waits (at most 30 s) for its completion.
public func waitFor<T: Sendable>(_ call: (@escaping @Sendable (Result<T, any Error>) -> Void) -> Void) throws -> T {
    let box = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    call { result in
        box.withLock { $0 = result }
        done.signal()
    }
    guard done.wait(timeout: .now() + 30) == .success else {
        throw BlockingSocket.Failure(description: "the store call did not complete within 30 s")
    }
    return try box.withLock { $0! }.get()
}

/// SplitMix64 (Steele, Lea, Flood 2014): a seeded generator, so a property test replays from its seed.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
