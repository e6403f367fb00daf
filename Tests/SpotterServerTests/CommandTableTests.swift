import Testing
import SpotterProtocol
@testable import SpotterServer

@Suite("CommandTable: every command has one handler")
struct CommandTableTests {
    @Test("the socket's table handles exactly the catalog's types")
    func coversTheCatalog() {
        #expect(Set(AppSocket.commands.handlers.keys) == Set(SocketCommand.catalog.keys))
    }
}
