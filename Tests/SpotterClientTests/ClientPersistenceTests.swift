import Foundation
import SpotterClient
import Testing
import TestSupport

/// The cursor and the outbox persisted: a message typed offline survives the client (the app killed), and a new
/// client on the same file sends it once.
@Suite("SpotterClient: persistence", .serialized)
struct ClientPersistenceTests {
    func temporaryFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("spotter-client-state-\(UUID().uuidString)/state.json")
    }

    @Test func theFileStoreRoundTripsAndWritesAtomically() throws {
        let url = temporaryFile()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let store = FilePersistence(url: url)
        #expect(try store.load() == PersistedState())  // no file yet: empty
        let state = PersistedState(cursor: 9_007_199_254_740_991, outbox: [
            OutboxEntry(clientMessageId: "a-1", threadId: "t", body: .text("مرحبا \u{1}\"quoted\"")),
            OutboxEntry(clientMessageId: "a-2", threadId: "t", body: .meal(["name": "Oats", "calories": 350.5])),
        ])
        try store.save(state)
        #expect(try FilePersistence(url: url).load() == state)
        try store.save(PersistedState(cursor: 0))
        #expect(try store.load() == PersistedState(cursor: 0))
        // Nothing but the file itself is left in its folder (the temporary file was renamed over it).
        #expect(try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path) == ["state.json"])
        // A damaged file is an error, not an empty state that would drop the outbox.
        try Data("{\"cursor\":".utf8).write(to: url)
        #expect(throws: (any Error).self) { try store.load() }
    }

    @Test func aMessageQueuedOfflineSurvivesANewClientInstance() async throws {
        let server = try LiveServer()
        defer { server.cleanup() }
        let (coach, client, thread) = try server.pair()
        let url = temporaryFile()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }

        // Offline: the app queues two messages, and is killed before any connect.
        let first = server.client(client, persistence: FilePersistence(url: url))
        let one = await first.enqueue(.text("typed offline 1"), to: thread)
        let two = await first.enqueue(.text("typed offline 2"), to: thread)
        #expect(try FilePersistence(url: url).load().outbox.map(\.clientMessageId) == [one, two])
        await first.close()

        // The next launch: a new client on the same file sends them, once each, in order.
        let second = server.client(client, persistence: FilePersistence(url: url))
        defer { Task { await second.close() } }
        #expect(await second.unacknowledged.map(\.clientMessageId) == [one, two])
        let heard = await Recorder(second)
        let early = await refusal { _ = try await second.acknowledgement(of: one) }
        #expect(early?.code == "closed")  // not connecting yet: the message stays queued
        await second.connect()
        try await eventually("both acknowledged") { heard.acknowledged.count == 2 }
        #expect(heard.acknowledged.map(\.clientMessageId) == [one, two])
        #expect(heard.acknowledged.map(\.seq) == [1, 2])
        // The file follows the client (written after the ack and the events, so waited for, not read at once).
        try await eventually("the file caught up") {
            guard let saved = try? FilePersistence(url: url).load() else { return false }
            let cursor = await second.cursor
            return saved.outbox.isEmpty && saved.cursor != nil && saved.cursor == cursor
        }

        // The coach has them once each.
        let coachSide = server.client(coach)
        defer { Task { await coachSide.close() } }
        await coachSide.connect()
        let history = try await coachSide.history(threadId: thread)
        #expect(history.messages.map(\.text) == ["typed offline 2", "typed offline 1"])
    }

    @Test func inMemoryPersistenceCarriesTheCursorToTheNextInstance() async throws {
        let server = try LiveServer()
        defer { server.cleanup() }
        let (coach, client, thread) = try server.pair()
        let memory = InMemoryPersistence()
        let first = server.client(client, persistence: memory)
        await first.connect()
        try await live(first)
        let cursor = await first.cursor
        await first.close()
        #expect(try memory.load().cursor == cursor)

        let coachSide = server.client(coach)
        defer { Task { await coachSide.close() } }
        await coachSide.connect()
        _ = try await coachSide.send(text: "while away", to: thread)
        let second = server.client(client, persistence: memory)
        defer { Task { await second.close() } }
        let heard = await Recorder(second)
        await second.connect()
        try await eventually("the missed message") { heard.messages.count == 1 }
        #expect(heard.messages[0].message.text == "while away")
    }
}
