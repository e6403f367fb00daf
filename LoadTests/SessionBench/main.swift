// The session book's cost, with no sockets and no disk: how long a coach's calendar week takes to answer, and
// how long a booking (invite, then accept with the overlap check) takes, in a book the size of a busy server.
// Issue 11's target: a coach's week with 200 sessions answers in ≤ 2 ms on the server.
import ArgumentParser
import Foundation
import Histogram
import SpotterCore
import SpotterProtocol

@main
struct SessionBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spotter-session-bench",
        abstract: "Times SessionBook's calendar and booking in a book of many coaches' sessions.")

    @Option(help: "Coaches in the book.") var coaches = 1000
    @Option(help: "Clients per coach.") var clients = 10
    @Option(help: "Scheduled sessions per client, all in the measured week (coach's week = clients × this).")
    var sessionsPerClient = 20
    @Option(help: "Calendar calls and bookings to time.") var calls = 20000

    func run() throws {
        let week: Int64 = 7 * 86_400
        let now: Int64 = 1_800_000_000
        let weekStart = now + 86_400
        var book = SessionBook()
        var id = 0
        // Each coach's sessions tile the week in 30-minute slots, one client after another: no overlaps.
        let setupStart = DispatchTime.now().uptimeNanoseconds
        for c in 0..<coaches {
            var slot: Int64 = 0
            for k in 0..<clients {
                for _ in 0..<sessionsPerClient {
                    id += 1
                    let start = weekStart + slot * 1800
                    slot += 1
                    _ = book.create(id: "s\(id)", threadID: "t\(c)-\(k)", coachID: "coach\(c)", clientID: "client\(c)-\(k)",
                                    by: .coach, start: start, durationMinutes: 30, purpose: "Training", meetURL: "u", now: now)
                    _ = book.act(.accept, sessionID: "s\(id)", userID: "client\(c)-\(k)", now: now)
                }
            }
        }
        let setupSeconds = Double(DispatchTime.now().uptimeNanoseconds - setupStart) / 1e9
        let perCoach = clients * sessionsPerClient
        precondition(book.calendar(of: "coach0", from: weekStart, to: weekStart + week).count == perCoach,
                     "the week does not hold every session")

        var generator = SystemRandomNumberGenerator()
        var calendar = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        var found = 0
        for _ in 0..<calls {
            let coach = "coach\(Int.random(in: 0..<coaches, using: &generator))"
            let began = DispatchTime.now().uptimeNanoseconds
            found += book.calendar(of: coach, from: weekStart, to: weekStart + week).count
            calendar.record(DispatchTime.now().uptimeNanoseconds - began)
        }
        precondition(found == calls * perCoach)

        // The `sessions` reply as the server's loop makes it: the calendar, each session's view, the pending
        // resolutions count and the JSON (what is left is framing it and the socket write).
        var reply = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        var bytes = 0
        for _ in 0..<calls {
            let coach = "coach\(Int.random(in: 0..<coaches, using: &generator))"
            let began = DispatchTime.now().uptimeNanoseconds
            let result = SessionsResult(sessions: book.calendar(of: coach, from: weekStart, to: weekStart + week).map(\.view),
                                        pendingResolutions: book.pendingResolutions(ofCoach: coach).count)
            bytes += result.jsonText.utf8.count
            reply.record(DispatchTime.now().uptimeNanoseconds - began)
        }
        precondition(bytes > calls * perCoach * 100)

        // A booking: an invite into the next week (free) and its accept, both overlap-checked.
        var booking = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        for n in 0..<calls {
            let c = Int.random(in: 0..<coaches, using: &generator), k = Int.random(in: 0..<clients, using: &generator)
            id += 1
            let start = weekStart + week + Int64(n) * 3600
            let began = DispatchTime.now().uptimeNanoseconds
            _ = book.create(id: "s\(id)", threadID: "t\(c)-\(k)", coachID: "coach\(c)", clientID: "client\(c)-\(k)",
                            by: .coach, start: start, durationMinutes: 30, purpose: "Training", meetURL: "u", now: now)
            let accepted = book.act(.accept, sessionID: "s\(id)", userID: "client\(c)-\(k)", now: now)
            booking.record(DispatchTime.now().uptimeNanoseconds - began)
            guard case .success(let outcome) = accepted, outcome.changed.last?.status == .scheduled else {
                throw ValidationError("booking \(n) did not schedule")
            }
        }

        func row(_ name: String, _ h: Histogram<UInt64>) -> String {
            func us(_ q: Double) -> String { String(format: "%.1f", Double(h.valueAtPercentile(q)) / 1000) }
            return "| \(name) | \(us(50)) | \(us(99)) | \(us(99.9)) | \(String(format: "%.1f", Double(h.max) / 1000)) |"
        }
        print("book: \(coaches) coaches × \(clients) clients × \(sessionsPerClient) sessions = \(coaches * perCoach) scheduled sessions (set up in \(String(format: "%.1f", setupSeconds)) s); \(calls) calls each")
        print("| operation | p50 µs | p99 µs | p99.9 µs | max µs |")
        print("|---|---|---|---|---|")
        print(row("a coach's week (\(perCoach) sessions)", calendar))
        print(row("the `sessions` reply for that week, JSON included (\(bytes / calls) bytes)", reply))
        print(row("booking: invite + accept", booking))
    }
}
