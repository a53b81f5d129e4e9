import Accounts
import ArgumentParser
import Foundation
import ReportModel
import StorePorts

extension Role: ExpressibleByArgument {}

/// `posterwatch user …`: accounts from the command line, for the first administrator of
/// a new database and for operators who prefer a shell to the API.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Add, list and change accounts.",
        subcommands: [Add.self, List.self, SetRole.self, Disable.self, Enable.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an account; its password is read from standard input (one line). Prints the new account's id.")

        @Option(help: "The person's name (1 to 100 characters).") var name: String
        @Option(help: "The email address, unique without regard to case.") var email: String
        @Option(help: "The phone number in any written form (contact only: sign-in is by email).") var phone: String
        @Option(help: "inspector, supervisor or admin.") var role: Role = .inspector
        @OptionGroup var store: StoreOptions

        func run() async throws {
            guard let password = readLine(strippingNewline: true) else {
                throw ValidationError("Give the password on standard input, one line (e.g. read -s PW; echo \"$PW\" | posterwatch user add …).")
            }
            let draft = try AccountDraft(name: name, email: email, phone: phone, password: password, role: role)
            do {
                print(try await store.accounts().create(draft).id)
            } catch is EmailTaken {
                throw ValidationError("The email \(draft.email) is already registered.")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List accounts: id, role, state, email, phone, name.")

        @Option(help: "Only accounts with this role.") var role: Role?
        @OptionGroup var store: StoreOptions

        func run() async throws {
            let accounts = try await store.accounts()
            var after: Int64 = 0
            while true {
                let page = try await accounts.accounts(role: role, after: after, limit: 1_000)
                for a in page {
                    print([String(a.id), a.role.rawValue, a.disabled ? "disabled" : "active", a.email, a.phone, a.name].joined(separator: "\t"))
                }
                guard page.count == 1_000, let last = page.last else { break }
                after = last.id
            }
        }
    }

    struct SetRole: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set-role", abstract: "Give an account another role.")

        @Argument(help: "The account's id.") var id: Int64
        @Argument(help: "inspector, supervisor or admin.") var role: Role
        @OptionGroup var store: StoreOptions

        func validate() throws {
            guard Role.people.contains(role) else { throw ValidationError("An account's role is inspector, supervisor or admin; integrations use API keys.") }
        }

        func run() async throws {
            let account = try await store.accounts().change(id, role: role)
            print("account \(account.id) is now \(account.role)")
        }
    }

    struct Disable: AccountStateCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an account: it can no longer log in.")
        static let disabled = true
        @Argument(help: "The account's id.") var id: Int64
        @OptionGroup var store: StoreOptions
    }

    struct Enable: AccountStateCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled account again.")
        static let disabled = false
        @Argument(help: "The account's id.") var id: Int64
        @OptionGroup var store: StoreOptions
    }
}

/// `user disable` and `user enable`: one change, either way.
protocol AccountStateCommand: AsyncParsableCommand {
    static var disabled: Bool { get }
    var id: Int64 { get }
    var store: StoreOptions { get }
}

extension AccountStateCommand {
    func run() async throws {
        let account = try await store.accounts().setDisabled(id, Self.disabled)
        print("account \(account.id) is \(account.disabled ? "disabled" : "enabled")")
    }
}
