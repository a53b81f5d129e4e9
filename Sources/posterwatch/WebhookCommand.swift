import ArgumentParser
import Foundation
import ReportModel
import Webhooks

/// `posterwatch webhook …`: the endpoints that receive changes, as `/v1/webhooks` manages them.
struct WebhookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhook", abstract: "Register, list and remove the endpoints that receive changes (Standard Webhooks).",
        subcommands: [Add.self, List.self, Remove.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register an endpoint and print its secret (whsec_…), shown this once. A running server sends to it at once.",
            discussion: "The URL may be any http or https address this machine reaches, internal ones included.")
        @Argument(help: "The endpoint's http or https URL.") var url: String
        @Option(help: ArgumentHelp("The change types it receives: \(ChangeType.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "type,type"))
        var events: String
        @Option(help: "What it is for (at most 500 characters).") var description = ""
        @OptionGroup var store: StoreOptions

        func run() async throws {
            let draft = try WebhookDraft(
                url: url, events: events.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }, description: description)
            let registered = try await store.webhooks().register(draft)
            Console.error("webhook \(registered.webhook.id) → \(registered.webhook.url) (\(registered.webhook.events.map(\.rawValue).joined(separator: ", "))); its secret is not shown again:")
            print(registered.secret)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the webhooks: id, state, events, URL (never their secrets).")
        @OptionGroup var store: StoreOptions

        func run() async throws {
            for webhook in try await store.webhooks().webhooks() {
                let state = webhook.enabled ? "enabled" : "disabled (\(webhook.disabledReason ?? ""))"
                print([String(webhook.id), state, webhook.events.map(\.rawValue).joined(separator: ","), webhook.url].joined(separator: "\t"))
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a webhook and its deliveries.")
        @Argument(help: "The webhook's id.") var id: Int64
        @OptionGroup var store: StoreOptions

        func run() async throws {
            try await store.webhooks().delete(id)
            print("webhook \(id) is removed")
        }
    }
}
