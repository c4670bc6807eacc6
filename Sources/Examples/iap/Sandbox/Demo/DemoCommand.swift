import Foundation
import IAPApp
import IAPCommandLine
import IAPCore
import IAPInMemory
import IAPStorageFile
import IAPTesting

/// `iap demo`: the whole chain on the simulated App Store, told as a story, with a file ledger in a directory.
enum DemoCommand {
    static let spec = CommandSpec(
        name: "demo",
        summary: "the whole chain on a simulated App Store, told as a story (start here)",
        synopsis: ["[--data DIR] [--fresh]"],
        discussion: """
            Runs a complete, deterministic story on a simulated App Store that signs like Apple, against a
            production server: products from a bundled .storekit file and a catalog that gives its consumable a
            pack size; a consumable, a non-consumable and a subscription bought; a grant that fails and is
            recovered by the retry queue; a lost order found by reconciliation; Ask to Buy approved later; App
            Review's sandbox purchase granted by the production server; a subscription through renewal, billing
            failure (its notification lost, repaired by the subscription status check, so the grace period
            holds) and recovery; a refund taken back by a notification; a support lookup by order id; an app on
            PurchaseCoordinator killed before the server answered, its purchase delivered from the outbox at the
            next launch. It ends with a table of
            entitlements and balances, and commands to try next on the files it leaves in DIR (the ledger, the
            catalog, the simulated App Store's root certificate and a transaction it signed).

            Run again without --fresh, it plays the same purchases and notifications against the ledger it left,
            and tells what it found there: every purchase recognised by its transaction id, nothing granted twice.
            """,
        options: [
            .value("data", "DIR", "where the ledger, the wallet and the audit log are kept (default ./iap-demo-data)"),
            .flag("fresh", "delete what an earlier run left in DIR and tell the story from the start"),
        ],
        examples: ["iap demo", "iap demo --data /tmp/iap-demo --fresh"]
    )

    /// The files the demo leaves for the commands it suggests, beside the ledger.
    enum Samples {
        /// The simulated App Store's root certificate (DER) of the last run.
        static let root = "simulated-app-store-root.der"
        /// A transaction the simulated App Store signed in the last run.
        static let transaction = "sample-transaction.jws"
        /// A production TEST notification signed by Apple.
        static let appleNotification = "apple-test-notification.jws"
    }

    /// The file that marks a directory as the demo's, so --fresh never deletes anything else.
    static let marker = ".iap-demo"

    static func run(_ arguments: [String]) async {
        let parsed = spec.parse(arguments)
        guard parsed.positionals.isEmpty else {
            spec.fail(.init(message: "unexpected argument '\(parsed.positionals[0])'"))
        }
        let path: String
        do {
            path = try parsed.value("data") ?? "iap-demo-data"
        } catch {
            spec.fail(error)
        }
        guard !path.isEmpty else {
            spec.fail(.init(message: "--data must not be empty"))
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
            try SystemFile.createDirectory(directory.path)
            try Data("This directory belongs to `iap demo`; `iap demo --fresh` deletes it.\n".utf8)
                .write(to: markerFile, options: .atomic)
        } catch {
            throw IAPError(.storageFailure, "cannot create \(directory.path): \(error)")
        }
    }

    static func tell(in directory: URL, shownAs path: String) async throws {
        Output.line(
            "swift-iap demo: a simulated App Store that signs like Apple (Production, and the Sandbox App Review"
        )
        Output.line("buys in), a production server built from swift-iap (verifier, delivery pipeline, notification")
        Output.line("processor, reconciler, support tool) over a file ledger in \(path)/ledger, and an app built on")
        Output.line("its PurchaseCoordinator. Nothing here talks to Apple.")

        let earlier = try await earlierRun(in: directory)
        var timeline = DemoTimeline(clock: ManualClock(now: DemoStory.start))
        timeline.told = earlier == nil
        let story = try await DemoStory(directory: directory, timeline: timeline)
        if let earlier {
            Output.line("")
            Output.line(
                "The ledger already holds \(earlier.transactions) transactions of \(earlier.users) users "
                    + "(\(earlier.delivered) delivered, \(earlier.revoked) revoked) from an earlier run."
            )
            Output.line(
                "This run plays the same purchases and notifications against it, and tells what it finds there."
            )
        }
        do {
            try await story.run()
            if let earlier {
                try await printReplay(of: story, earlier: earlier)
            }
            try await printFinalTable(of: story)
            try await story.writeSamples()
        } catch {
            await story.ledger.close()
            throw error
        }
        await story.ledger.close()
        printTryNext(in: directory, end: story.clock.now)
    }

    /// The ledger statistics an earlier run left in the directory, or `nil` when there is no earlier run.
    static func earlierRun(in directory: URL) async throws -> LedgerStatistics? {
        let ledger = directory.appendingPathComponent("ledger", isDirectory: true)
        guard FileManager.default.fileExists(atPath: ledger.path) else {
            return nil
        }
        let store = try FileEntitlementStore(directory: ledger)
        let statistics: LedgerStatistics
        do {
            statistics = try await store.statistics()
        } catch {
            await store.close()
            throw error
        }
        await store.close()
        return statistics.transactions > 0 ? statistics : nil
    }

    /// What a replay found: the server's answers by kind, and what this run added to the ledger and the wallet.
    static func printReplay(of story: DemoStory, earlier: LedgerStatistics) async throws {
        let now = try await story.ledger.statistics()
        let counted = story.tally.counted
        DemoTimeline.heading("What this run found")
        Output.line("  The server answered the same purchases and notifications \(counted.values.reduce(0, +)) times:")
        for (kind, meaning) in [
            ("alreadyDelivered", "already delivered, nothing granted again"),
            ("revoked", "refunded: the ledger takes back what it granted once, never twice"),
            ("duplicate", "a notification already processed, ignored"),
            ("recorded", "a notification recorded, nothing to deliver"),
            ("delivered", "delivered now (the earlier run had not got that far)"),
            ("deferred", "grant failed; a retry is scheduled"),
            ("pending", "pending: another deliverer is on it"),
            ("unowned", "waiting for its owner"),
            ("rejected", "rejected"),
        ] {
            if let count = counted[kind], count > 0 {
                let number = String(count)
                Output.line("    \(String(repeating: " ", count: max(0, 4 - number.count)))\(number)  \(meaning)")
            }
        }
        Output.line(
            "  This run added \(now.transactions - earlier.transactions) transactions, "
                + "\(now.delivered - earlier.delivered) deliveries and \(now.revoked - earlier.revoked) take-backs "
                + "to the ledger."
        )
        let applied = await story.wallet.appliedThisRun
        Output.line(
            applied == 0
                ? "  The wallet applied nothing: nothing was granted twice."
                : "  The wallet applied \(applied) grants and take-backs, each for the first time: nothing was "
                    + "granted twice."
        )
        Output.line("  (iap demo --fresh starts over and tells the whole story.)")
    }

    /// The commands to try next: each works from any directory, on the files this run left in `directory`.
    static func printTryNext(in directory: URL, end: Date) {
        let iap = shellQuoted(invocation())
        func file(_ name: String) -> String {
            shellQuoted(directory.appendingPathComponent(name).standardizedFileURL.path)
        }
        let data = shellQuoted(directory.standardizedFileURL.path)
        let ledger = file("ledger")
        let store =
            "--bundle-id \(DemoProducts.bundleId) --environment Production,Sandbox --app-apple-id "
            + "\(DemoProducts.appAppleId)"
        DemoTimeline.heading("Try next (from any directory)")
        for (command, meaning) in [
            (
                "\(iap) ledger entitlements --data \(ledger) --user bob --at \(TextDate.text(end))",
                "what bob holds at the end"
            ),
            ("\(iap) ledger history --data \(ledger) --user alice", "alice's orders, newest first"),
            ("\(iap) ledger stats --data \(ledger)", "counts over the whole ledger"),
            (
                "\(iap) verify --root \(file(Samples.root)) \(store) \(file(Samples.transaction))",
                "verify a transaction the simulated App Store signed, against its root"
            ),
            (
                "\(iap) ledger ingest --data \(ledger) --root \(file(Samples.root)) \(store) --ledger-only "
                    + file(Samples.transaction),
                "send it to the ledger again: ACK <id> alreadyDelivered"
            ),
            (
                "\(iap) verify --bundle-id com.nineton.taller --environment Production --app-apple-id 6450284872 "
                    + file(Samples.appleNotification),
                "a real notification, signed by Apple"
            ),
            (
                "cat \(file("ledger/" + FileLedgerSite.supportAuditFileName))",
                "what support looked at and did, when, each entry chained"
            ),
            ("\(iap) support audit verify \(ledger)", "check that chain: no entry edited, removed or moved"),
            ("\(iap) ledger check --data \(ledger)", "checksums and invariants"),
            ("\(iap) demo --data \(data)", "again: every purchase is recognised, nothing is granted twice"),
            ("\(iap) demo --data \(data) --fresh", "start over"),
        ] {
            Output.line("  $ \(command)")
            Output.line("      \(meaning)")
        }
        Output.line("")
        Output.line("Then put the same pieces in your server: Documentation/GettingStarted.md in swift-iap.")
    }

    /// How to run this tool again from anywhere: its name when it was found on the `PATH`, else its absolute path.
    static func invocation() -> String {
        let name = CommandLine.arguments.first ?? "iap"
        guard name.contains("/") else {
            return name.isEmpty ? "iap" : name
        }
        return URL(fileURLWithPath: name).standardizedFileURL.path
    }

    /// A word as a POSIX shell reads it back: unchanged when it is plain, else in single quotes.
    static func shellQuoted(_ word: String) -> String {
        let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,")
        if !word.isEmpty, word.allSatisfy(plain.contains) {
            return word
        }
        return "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    static func printFinalTable(of story: DemoStory) async throws {
        let rows = try await story.finalTable()
        DemoTimeline.heading("Entitlements and balances at \(story.timeline.stamp(story.clock.now))")
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
                row.user.padding(toLength: 8, withPad: " ", startingAt: 0),
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
        Output.line(
            "  environments: "
                + statistics.environments.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
                .joined(separator: ", ")
                + " (App Review's purchase, kept apart from revenue)"
        )
        Output.line("  wallet: \(applied) grants and take-backs applied by this run")
    }
}
