import Accounts
import ArgumentParser
import Foundation
import ReportModel

/// `posterwatch apikey …`: credentials for machine clients.
struct APIKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apikey", abstract: "Create, list and revoke API keys for integrations.", subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an API key and print it. It is shown this once: only its hash is stored. Send it as Authorization: Bearer <key>.")
        @Option(help: "What the key is for (1 to 100 characters).") var name: String
        @Option(help: "The key's role: integration.") var role: Role = .integration
        @OptionGroup var store: StoreOptions

        func run() async throws {
            let (key, secret) = try await store.accounts().createAPIKey(name: name, role: role)
            Console.error("API key \(key.id) (\(key.name), \(key.role)); it is not shown again:")
            print(secret)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List API keys: id, role, state, name (never the keys).")
        @OptionGroup var store: StoreOptions

        func run() async throws {
            for key in try await store.accounts().apiKeys() {
                print([String(key.id), key.role.rawValue, key.revokedAt == nil ? "active" : "revoked", key.name].joined(separator: "\t"))
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke an API key: it stops at once, also in a running server.")
        @Argument(help: "The key's id.") var id: Int64
        @OptionGroup var store: StoreOptions

        func run() async throws {
            try await store.accounts().revokeAPIKey(id)
            print("API key \(id) is revoked")
        }
    }
}
