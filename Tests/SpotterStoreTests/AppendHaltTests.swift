import Testing
@testable import SpotterPorts

/// The halt after a failed append, on its own: what runs, what is refused, and that an append submitted before a
/// resume never runs after it (it would write a seq that follows a lost one).
@Suite("The halt after a failed append")
struct AppendHaltTests {
    struct Refused: Error {}

    @Test func aFailureHaltsUntilResumeAndStaleAppendsStayRefused() throws {
        let halt = AppendHalt()
        let first = halt.ticket()
        #expect(try halt.run(first) { 1 } == 1)
        let queued = halt.ticket()  // submitted before the failure, run after it
        #expect(throws: Refused.self) { try halt.run(first) { () throws -> Int in throw Refused() } }
        #expect(throws: ChatLogError.self) { try halt.run(queued) { 2 } }
        halt.resume()
        // Still queued when the owner resumed: refused, whatever the halt says now.
        #expect(throws: ChatLogError.self) { try halt.run(queued) { 3 } }
        let fresh = halt.ticket()
        #expect(try halt.run(fresh) { 4 } == 4)
    }

    @Test func aBatchThatDidNotCommitHaltsToo() throws {
        let halt = AppendHalt()
        let ticket = halt.ticket()
        halt.guarding { (_: Result<Int, any Error>) in }(.failure(Refused()))
        #expect(throws: ChatLogError.self) { try halt.run(ticket) { 1 } }
    }
}
