import Testing
import SpotterCore
import SpotterStore

/// Finding 1 of the simulator, on the engines themselves (`MemoryChatLog`, `LoadedChat.makeState()`): a start
/// replays the records after the mark and clears the dirty marks they set, so those threads' views are not saved
/// while the next checkpoint's mark passes their records; the start after that forgets them.
@Suite("A start's tail")
struct TailViewsTests {
    @Test func aThreadOnlyInTheTailKeepsItsSeqsThroughTwoRestarts() throws {
        func row(_ no: Int64) -> ThreadRow {
            ThreadRow(id: "t\(no)", no: no, coachID: "k\(no)", clientID: "c\(no)", createdAt: no, active: true, lastSeq: 0,
                      lastMessageAt: nil, lastPreview: nil, lastSide: nil, lastPos: 0, coach: .init(delivered: 0, read: 0),
                      client: .init(delivered: 0, read: 0))
        }
        let log = MemoryChatLog(threads: [row(1), row(2)])
        // Killed after t1's message was committed, before a checkpoint saved t1's view.
        log.append([ChatRecord(threadNo: 1, side: .client, seq: 1, at: 1, .message(MessageRecord(clientMessageID: "a", body: "hi")))]) { _ in }
        let loaded = try log.load()
        let state = loaded.makeState()
        #expect(state.thread(no: 1)?.lastSeq == 1)
        // Only t2 changes; the checkpoint marks what the process has applied (`CoreRunner.checkpointMark`).
        state.installWindow(threadID: "t2", [])
        guard case .append(var record) = try state.send(sender: "c2", threadID: "t2", clientMessageID: "b", kind: .text,
                                                        body: "yo", now: 2) else { return #expect(Bool(false)) }
        log.append([record]) { _ in }
        record.pos = 2
        state.committed(record)
        log.checkpoint(state.takeDirty(), first: true, last: true, through: max(loaded.position, record.pos)) { _ in }
        // The next start, however it stops.
        let restarted = try log.load().makeState()
        // Simulator finding 1, fixed: the tail's threads stay dirty, so the checkpoint saved t1 with t2.
        #expect(restarted.thread(no: 1)?.lastSeq == 1)
    }
}
