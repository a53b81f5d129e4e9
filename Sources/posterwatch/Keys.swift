import Accounts
import ArgumentParser
import ReportStore

/// `posterwatch keys rotate`: a new key for signing access tokens.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "keys", abstract: "Manage the keys that sign access tokens.", subcommands: [Rotate.self])

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a signing key. Servers sign with it from their next start; tokens signed with the key before it stay valid until they expire, older keys are dropped.")
        @OptionGroup var store: StoreOptions

        func run() throws {
            let kid = try AccessTokens.rotate(AccountStore(try ReportStore(path: store.db)))
            print("new signing key \(kid)")
        }
    }
}
