/// The session timers' queue: positions of sessions in the book by the moment their next step is due, as a
/// binary min-heap, so a tick takes what is due in O(k log n) instead of looking at every open session.
///
/// Entries are never updated in place: each change of a session pushes its new due moment, and an entry that
/// no longer says when its session is due (the session moved, finished, or was handled) is dropped when it
/// comes out — `SessionBook.takeDue(now:)` checks every entry against the session itself. The book rebuilds the
/// queue from its open sessions when stale entries outnumber them (`needsCompaction`).
struct SessionDueQueue: Sendable {
    struct Entry: Sendable {
        var at: Int64
        var position: Int
    }

    private var heap: [Entry] = []

    var count: Int { heap.count }

    mutating func push(at: Int64, position: Int) {
        heap.append(Entry(at: at, position: position))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].at < heap[parent].at else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns every entry due at or before `now` (in no particular order).
    mutating func popDue(upTo now: Int64) -> [Entry] {
        var due: [Entry] = []
        while let first = heap.first, first.at <= now {
            due.append(first)
            let last = heap.removeLast()
            guard !heap.isEmpty else { break }
            heap[0] = last
            siftDown(from: 0)
        }
        return due
    }

    /// Whether stale entries have grown well past the `live` sessions that need one.
    func needsCompaction(live: Int) -> Bool { heap.count > 2 * live + 1024 }

    /// Replaces every entry (heapified in O(n)).
    mutating func rebuild(_ entries: [Entry]) {
        heap = entries
        var index = heap.count / 2
        while index > 0 {
            index -= 1
            siftDown(from: index)
        }
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].at < heap[smallest].at { smallest = left }
            if right < heap.count, heap[right].at < heap[smallest].at { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

extension SessionBook {
    /// Queues `position`'s next step, if it has one (after every change of the session).
    mutating func scheduleTimer(_ position: Int) {
        guard open.contains(position), let at = nextStep(storage[position])?.at else { return }
        timers.push(at: at, position: position)
    }

    /// The open sessions whose next step is due at `now`, in order of start (then id): what `dueByScan(now:)`
    /// finds, from the queue. Entries taken out are gone; `tick` queues each due session again after handling it
    /// (a step that failed leaves it due, as the scan would find it next time).
    mutating func takeDue(now: Int64) -> [Int] {
        var seen = Set<Int>()
        var due: [Int] = []
        for entry in timers.popDue(upTo: now) where seen.insert(entry.position).inserted {
            guard open.contains(entry.position), let step = nextStep(storage[entry.position]), step.at <= now else { continue }
            due.append(entry.position)
        }
        if timers.needsCompaction(live: open.count) {
            timers.rebuild(open.compactMap { position in
                nextStep(storage[position]).map { SessionDueQueue.Entry(at: $0.at, position: position) }
            })
        }
        return sortedByStart(due)
    }

    /// The straightforward answer `takeDue` must give: every open session looked at (the tests compare the two).
    func dueByScan(now: Int64) -> [Int] {
        sortedByStart(open.filter { position in nextStep(storage[position]).map { $0.at <= now } ?? false })
    }

    /// What is due, in order of start (then id), whatever order the book was built in: a restarted server does
    /// the same.
    private func sortedByStart(_ positions: [Int]) -> [Int] {
        positions.sorted { (storage[$0].start, storage[$0].id) < (storage[$1].start, storage[$1].id) }
    }
}
