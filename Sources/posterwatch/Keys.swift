import Accounts
import ArgumentParser

/// `posterwatch keys rotate`: a new key for signing access tokens.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "keys", abstract: "Manage the keys that sign access tokens.", subcommands: [Rotate.self])

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a signing key. Servers sign with it within a minute; tokens signed with the key before it stay valid until they expire, older keys are dropped.")
        @OptionGroup var store: StoreOptions

        func run() async throws {
            let kid = try await AccessTokens.rotate(store.stores().accounts)
            print("new signing key \(kid)")
        }
    }
}
