import ArgumentParser
import SpotterCore
import SpotterProtocol
import SpotterPorts

#if canImport(Glibc)
import Glibc
#endif

struct Admin: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Administration: create admin accounts, back up the data directory.",
        subcommands: [CreateAdmin.self, Backup.self]
    )
}

struct CreateAdmin: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create-admin",
        abstract: "Create an admin account that signs in with email and password.",
        discussion: "The password is read from the environment variable SPOTTER_ADMIN_PASSWORD or from --password-file, never from the command line (it would show in the process list)."
    )

    @OptionGroup var storage: StorageOptions

    @Option(help: "The admin's email address.")
    var email: String

    @Option(help: "The admin's full name.")
    var fullName: String

    @Option(help: ArgumentHelp("A file whose first line is the password.", valueName: "path"))
    var passwordFile: String?

    func run() throws {
        let logger = try storage.makeLogger()
        let password: String
        if let passwordFile {
            guard let text = readFirstLine(passwordFile) else { throw ValidationError("cannot read \(passwordFile)") }
            password = text
        } else if let text = env("SPOTTER_ADMIN_PASSWORD") {
            password = text
        } else {
            throw ValidationError("set SPOTTER_ADMIN_PASSWORD or pass --password-file")
        }
        do {
            let normalized = try AccountRules.normalizeEmail(email)
            let name = try AccountRules.normalizeName(fullName)
            try AccountRules.checkPassword(password, confirmation: password)
            let user = try storage.openAccounts(logger: logger).createUser(
                id: SecureRandom.uuid(), role: "admin", fullName: name, email: normalized, phone: nil,
                passwordHash: PasswordHasher().hash(password), now: SystemClock().now)
            print("created admin \(user.id) <\(normalized)>")
        } catch let error as AccountStoreError where error == .emailTaken {
            throw ValidationError("an account with email \(email) already exists")
        } catch let error as APIErrorConvertible {
            throw ValidationError(error.englishDescription)
        }
    }
}

/// Lets the CLI print rule violations in plain English.
protocol APIErrorConvertible: Error { var englishDescription: String { get } }

extension APIError: APIErrorConvertible {
    var englishDescription: String {
        code.message(.english) + (field.map { " (\($0))" } ?? "")
    }
}

func readFirstLine(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var line: UnsafeMutablePointer<CChar>?
    var capacity = 0
    guard getline(&line, &capacity, file) > 0, let line else { return nil }
    defer { free(line) }
    var text = String(cString: line)
    while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
    return text
}

/// The access-token signing secret: `SPOTTER_TOKEN_SECRET` (at least 32
/// characters) if set, else `token-secret` in the data directory, created
/// with 32 random bytes (mode 0600) on first start so that restarts keep
/// everyone signed in.
enum TokenSecret {
    static func load(directory: String) throws -> [UInt8] {
        if let text = env("SPOTTER_TOKEN_SECRET") {
            guard text.utf8.count >= 32 else { throw ValidationError("SPOTTER_TOKEN_SECRET must be at least 32 characters") }
            return Array(text.utf8)
        }
        let path = directory + "/token-secret"
        if let hex = readFirstLine(path), let bytes = decodeHex(hex), bytes.count >= 32 { return bytes }
        let bytes = SecureRandom.bytes(32)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw ValidationError("cannot write \(path)") }
        defer { close(fd) }
        let text = bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() + "\n"
        _ = text.withCString { write(fd, $0, strlen($0)) }
        return bytes
    }

    static func decodeHex(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: chars.count, by: 2) {
            guard let byte = UInt8(String(decoding: chars[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
