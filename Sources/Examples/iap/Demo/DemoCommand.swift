import Foundation
import IAPApp
import IAPCore
import IAPInMemory
import IAPStorageFile
import IAPTesting

/// `iap demo`: the whole chain on the simulated App Store, told as a story, with a file ledger in a directory.
enum DemoCommand {
    static let usage = """
        usage: iap demo [--data DIR] [--fresh]

        Runs a complete, deterministic story on a simulated App Store that signs like Apple: products from a
        bundled .storekit file; a consumable, a non-consumable and a subscription bought; a grant that fails and is
        recovered by the retry queue; a lost order found by reconciliation; Ask to Buy approved later; a
        subscription through renewal, billing failure, grace period and recovery; a refund taken back by a
        notification; a support lookup by order id; an app on PurchaseCoordinator killed before the server
        answered, its purchase delivered from the outbox at the next launch. It ends with a table of entitlements
        and balances.

        --data DIR   where the ledger, the wallet and the audit log are kept (default: ./iap-demo-data)
        --fresh      delete what an earlier run left in DIR and start over

        Running it again without --fresh replays the story against the same ledger: every purchase is
        recognised by its transaction id and nothing is granted twice.
        """

    /// The file that marks a directory as the demo's, so --fresh never deletes anything else.
    static let marker = ".iap-demo"

    static func run(_ arguments: [String]) async {
        let parsed = Arguments.forCommand(arguments, options: ["data"], flags: ["fresh"], usage: usage)
        guard parsed.positionals.isEmpty else {
            exitWithUsage(.init(message: "unexpected argument '\(parsed.positionals[0])'"), usage: usage)
        }
        let path: String
        do {
            path = try parsed.value("data") ?? "iap-demo-data"
        } catch {
            exitWithUsage(error, usage: usage)
        }
        guard !path.isEmpty else {
            exitWithUsage(.init(message: "--data must not be empty"), usage: usage)
        }
        let directory = URL(fileURLWithPath: path, isDirectory: true)
        do {
            try prepare(directory, fresh: parsed.has("fresh"))
            try await tell(in: directory, shownAs: path)
        } catch let error as IAPError {
            Output.error("error: \(error.code.rawValue): \(error.message)")
            terminate(.rejected)
        } catch {
            Output.error("error: \(error)")
            terminate(.rejected)
        }
        terminate(.success)
    }

    /// Makes the directory ready: created and marked; emptied first with `--fresh` when it is the demo's.
    static func prepare(_ directory: URL, fresh: Bool) throws {
        let files = FileManager.default
        let markerFile = directory.appendingPathComponent(marker)
        var isDirectory: ObjCBool = false
        if files.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw IAPError(.invalidArgument, "\(directory.path) exists and is not a directory")
            }
            let contents = (try? files.contentsOfDirectory(atPath: directory.path)) ?? []
            if !contents.isEmpty, !files.fileExists(atPath: markerFile.path) {
                throw IAPError(
                    .invalidArgument,
                    "\(directory.path) is not empty and was not made by iap demo; choose another --data DIR"
                )
            }
            if fresh {
                do {
                    try files.removeItem(at: directory)
                } catch {
                    throw IAPError(.storageFailure, "cannot remove \(directory.path): \(error)")
                }
            }
        }
        do {
            try files.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data("This directory belongs to `iap demo`; `iap demo --fresh` deletes it.\n".utf8)
                .write(to: markerFile, options: .atomic)
        } catch {
            throw IAPError(.storageFailure, "cannot create \(directory.path): \(error)")
        }
    }

    static func tell(in directory: URL, shownAs path: String) async throws {
        Output.line("swift-iap demo: a simulated App Store that signs like Apple, and a server built from swift-iap")
        Output.line("(verifier, delivery pipeline, notification processor, reconciler, support tool) over a file")
        Output.line(
            "ledger in \(path)/ledger, and an app built on its PurchaseCoordinator. Nothing here talks to Apple."
        )

        let timeline = DemoTimeline(clock: ManualClock(now: DemoStory.start))
        let story = try await DemoStory(directory: directory, timeline: timeline)
        let before = try await story.ledger.statistics()
        if before.transactions > 0 {
            Output.line("")
            Output.line(
                "The ledger already holds \(before.transactions) transactions from an earlier run. The story plays again"
            )
            Output.line("against it: each purchase is recognised by its transaction id, and nothing is granted twice.")
            Output.line("(iap demo --fresh starts over.)")
        }
        do {
            try await story.run()
            try await printFinalTable(of: story)
        } catch {
            await story.ledger.close()
            throw error
        }
        await story.ledger.close()

        Output.line("")
        Output.line("Try next")
        Output.line("────────")
        let end = story.clock.now.millisecondsSince1970
        Output.line("  swift run iap ledger entitlements --data \(path)/ledger --user bob --at \(end)")
        Output.line("  swift run iap ledger history --data \(path)/ledger --user alice")
        for (command, meaning) in [
            ("cat \(path)/support-audit.jsonl", "what support did, and when"),
            ("swift run iap demo", "again: every purchase is recognised, nothing is granted twice"),
            ("swift run iap demo --fresh", "start over"),
            ("Documentation/GettingStarted.md", "put the same pieces in your server"),
        ] {
            Output.line("  \(command.padding(toLength: 40, withPad: " ", startingAt: 0))  \(meaning)")
        }
    }

    static func printFinalTable(of story: DemoStory) async throws {
        let rows = try await story.finalTable()
        let title = "Entitlements and balances at \(story.timeline.stamp(story.clock.now))"
        story.timeline.section(title)
        let header = DemoTableRow(
            user: "user",
            product: "product",
            state: "state",
            access: "access",
            until: "until",
            ledgerCoins: "coins",
            walletCoins: "wallet"
        )
        for row in [header] + rows {
            let columns = [
                row.user.padding(toLength: 6, withPad: " ", startingAt: 0),
                row.product.padding(toLength: 12, withPad: " ", startingAt: 0),
                row.state.padding(toLength: 12, withPad: " ", startingAt: 0),
                row.access.padding(toLength: 6, withPad: " ", startingAt: 0),
                row.until.padding(toLength: 12, withPad: " ", startingAt: 0),
                row.ledgerCoins.padding(toLength: 6, withPad: " ", startingAt: 0),
                row.walletCoins,
            ]
            Output.line("  " + columns.joined(separator: "  ").trimmingCharacters(in: .whitespaces))
        }
        let statistics = try await story.ledger.statistics()
        let applied = await story.wallet.appliedThisRun
        Output.line("")
        Output.line(
            "  ledger: \(statistics.transactions) transactions of \(statistics.users) users, \(statistics.delivered) "
                + "delivered, \(statistics.revoked) revoked, \(statistics.pendingRetries) waiting for a retry, "
                + "\(statistics.deadLetters) dead letters"
        )
        Output.line("  wallet: \(applied) grants and take-backs applied by this run")
    }
}
