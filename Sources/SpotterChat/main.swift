// spotter-chat: signs in and chats from stdin, through SpotterClient (Sources/SpotterClient/README.md).
//
//   spotter-chat --url http://127.0.0.1:8080 --email sara@example.com --password secret1 [--thread ID]
//                [--language ar] [--state FILE]
//
// Each line typed is sent to the thread (the first of the conversation list unless --thread names one); messages,
// ✓✓ receipts and connection changes are printed. --state keeps the cursor and unsent lines in FILE, so a line
// typed while the server is down is sent after a restart of this program. /quit ends.
import Foundation
import SpotterClient

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: "--\(name)"), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("spotter-chat: \(message)\n".utf8))
    exit(1)
}

guard let base = option("url").flatMap(URL.init(string:)), let email = option("email"), let password = option("password") else {
    fail("usage: spotter-chat --url URL --email EMAIL --password PASSWORD [--thread ID] [--language ar] [--state FILE]")
}
let language = option("language")

/// Lines from stdin, read on a thread of their own.
func stdinLines() -> AsyncStream<String> {
    AsyncStream { continuation in
        let thread = Thread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
        thread.start()
    }
}

do {
    let http = SpotterHTTP(baseURL: base, language: language)
    let session = try await http.signIn(email: email, password: password)
    let persistence: any SpotterPersistence = option("state").map { FilePersistence(url: URL(fileURLWithPath: $0)) } ?? InMemoryPersistence()
    let client = SpotterClient(configuration: SpotterConfiguration(url: base, tokens: session.tokens, language: language,
                                                                   persistence: persistence))
    let me = session.user.id
    let events = await client.events()
    await client.connect()
    let threadId: String
    if let given = option("thread") {
        threadId = given
    } else {
        guard let first = try await client.threads().threads.first else { fail("no thread yet: link a coach first") }
        threadId = first.threadId
    }
    print("signed in as \(session.user.fullName ?? me); chatting in \(threadId) (/quit ends)")

    let printer = Task {
        for await event in events {
            switch event {
            case .message(let event) where event.message.threadId == threadId:
                let who = event.message.senderId == me ? "me" : "peer"
                print("[\(event.message.seq)] \(who): \(event.message.text ?? "(\(event.message.kind))")")
                if event.message.senderId != me {
                    _ = try? await client.markRead(threadId: threadId, seq: event.message.seq)
                }
            case .receipt(let receipt) where receipt.threadId == threadId:
                print("✓✓ read up to \(receipt.readSeq)")
            case .state(let state):
                print("· \(state)")
            case .sendFailed(_, let error):
                print("! not sent: \(error.message)")
            case .stopped(let reason, _):
                print("! stopped: \(reason.rawValue); sign in again")
            default:
                break
            }
        }
    }
    for await line in stdinLines() {
        if line == "/quit" { break }
        guard !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
        await client.enqueue(.text(line), to: threadId)
    }
    await client.close()
    printer.cancel()
} catch let error as SpotterError {
    fail(error.description)
} catch {
    fail("\(error)")
}
