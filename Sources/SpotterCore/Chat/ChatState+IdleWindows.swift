extension ChatState {
    /// `dropIdleWindows` a slice at a time, for the loop's once-a-second tick: looks at no more than `atMost`
    /// warm threads per call, going on with the pass the last call left (a pass takes the warm threads of
    /// when it starts; one warmed since waits for the next pass), so the tick costs O(`atMost`), not O(warm
    /// threads) — at 10,000 warm threads the whole walk held the loop ≈ 0.25 ms every second. A window is
    /// dropped at most one pass late (warm / `atMost` calls), which the 10-minute idle time dwarfs.
    @discardableResult
    public func dropIdleWindows(nowMilliseconds: UInt64, idleMilliseconds: UInt64, atMost: Int) -> Int {
        if idleScan.isEmpty { idleScan = Array(warm.keys) }
        var dropped = 0
        var left = max(atMost, 1)
        while left > 0, let no = idleScan.popLast() {
            left -= 1
            guard let thread = warm[no], nowMilliseconds &- thread.recentUsedAt >= idleMilliseconds else { continue }
            thread.recent = nil
            warm[no] = nil
            dropped += 1
        }
        return dropped
    }
}
