extension ChatState {
    /// `dropIdleWindows` a slice at a time, for the loop's once-a-second tick: looks at no more than `atMost`
    /// warm threads per call, going on with the pass the last call left (a pass takes the warm threads of
    /// when it starts; one warmed since waits for the next pass), so the tick costs O(`atMost`), not O(warm
    /// threads) — at 10,000 warm threads the whole walk held the loop ≈ 0.25 ms every second. A window is
    /// dropped at most one pass late (warm / `atMost` calls), which the 10-minute idle time dwarfs.
    ///
    /// The pass holds the threads themselves, not their numbers: looking at one is a field read, not a
    /// dictionary lookup (with lookups, a slice cost 5× the whole walk it replaced at 100 warm threads).
    @discardableResult
    public func dropIdleWindows(nowMilliseconds: UInt64, idleMilliseconds: UInt64, atMost: Int) -> Int {
        let atMost = max(atMost, 1)
        if idleScan.isEmpty {
            // Few enough for one slice: the whole walk, which costs least (no copy of the threads).
            if warm.count <= atMost { return dropIdleWindows(nowMilliseconds: nowMilliseconds, idleMilliseconds: idleMilliseconds) }
            idleScan = Array(warm.values)
        }
        let slice = Array(idleScan.suffix(atMost))  // a copy: a slice would share the storage and make the removal copy all
        idleScan.removeLast(slice.count)
        var dropped = 0
        for thread in slice {
            // Its window may have gone since the pass began (a reset), or the thread been replaced by another.
            guard thread.recent != nil, nowMilliseconds &- thread.recentUsedAt >= idleMilliseconds,
                  warm[thread.no] === thread else { continue }
            thread.recent = nil
            warm[thread.no] = nil
            dropped += 1
        }
        return dropped
    }
}
