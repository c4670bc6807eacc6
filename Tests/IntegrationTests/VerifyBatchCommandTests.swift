import Foundation
import IAPCore
import IAPTestSupport
import IAPCrypto
import Testing

/// `iap verify --batch` as a script or a pipeline uses it: many lines verified on every core and answered in input
/// order, byte for byte what `JSONEncoder` writes, a pipe answered line by line, and any line, however long, answered
/// without holding it.
@Suite("iap verify --batch")
struct VerifyBatchCommandTests {
    /// Signed test transactions and the root that accepts them.
    struct Workbench {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-batch-\(UUID().uuidString)")
        let tokens: [String]
        var root: String { directory.appending(path: "root.der").path }

        init(count: Int) async throws {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let generated = try await CommandLineContractTests.iap([
                "testdata", "transactions", "--count", String(count), "--root-out",
                directory.appending(path: "root.der").path,
            ])
            #expect(generated.status == 0)
            tokens = generated.stdoutLines
        }

        func verifier() throws -> AppStoreSignedDataVerifier {
            let root = try X509Certificate(derEncoded: Array(try Data(contentsOf: URL(filePath: root))))
            return try AppStoreSignedDataVerifier(
                configuration: .init(
                    rootCertificates: [root],
                    bundleId: nil,
                    environment: nil,
                    skippedChecks: .all
                )
            )
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// Runs `iap` with `input` on its standard input (from a file, so no pipe can fill up and stall the other).
    static func run(_ arguments: [String], input: Data) async throws -> (status: Int32, stdout: [String]) {
        let run = try await ChildProcess.run(try EmulatorProcess.binary(), arguments, input: input)
        let lines = String(decoding: run.standardOutput, as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: false)
        return (run.status, lines.dropLast().map(String.init))
    }

    /// Starts `iap` with pipes on its standard input and output (its standard error in `logFile`).
    static func launch(_ arguments: [String], logFile: URL) throws -> ChildProcess {
        try ChildProcess(
            executable: try EmulatorProcess.binary(),
            arguments: arguments,
            logFile: logFile,
            input: .pipe
        )
    }

    /// Reads a process's output on another thread, line by line: each line is appended to `answers`, and `arrived`
    /// is signalled once per line.
    static func readAnswers(_ stdout: FileHandle) -> (answers: LockedValue<[String]>, arrived: DispatchSemaphore) {
        let answers = LockedValue<[String]>([])
        let arrived = DispatchSemaphore(value: 0)
        let reader = Thread {
            var pending = Data()
            while true {
                let chunk = stdout.availableData
                if chunk.isEmpty {
                    return
                }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    answers.withLock { $0.append(line) }
                    arrived.signal()
                }
            }
        }
        reader.start()
        return (answers, arrived)
    }

    @Test func manyLinesAreAnsweredInInputOrderWithJSONEncodersBytes() async throws {
        let bench = try await Workbench(count: 400)
        defer { bench.remove() }
        let verifier = try bench.verifier()
        // Good tokens among rejected lines, some tokens wrapped as a client may send them.
        var lines: [String] = []
        for (index, token) in bench.tokens.enumerated() {
            switch index % 10 {
            case 3: lines.append("  \(token)\t")
            case 5: lines.append(#"{"signedPayload":"\#(token)"}"#)
            case 7: lines.append(String(token.dropLast(2)) + "AA")
            default: lines.append(token)
            }
            if index % 50 == 0 {
                lines += ["", "garbage", "a.b.c"]
            }
        }
        let run = try await Self.run(
            ["verify", "--batch", "--root", bench.root],
            input: Data((lines.joined(separator: "\n") + "\n").utf8)
        )
        #expect(run.status == 0)
        #expect(run.stdout.count == lines.count)
        let encoder = AppStoreJSON.makeEncoder()
        for (line, answer) in zip(lines, run.stdout) {
            let token = line.hasPrefix("{") ? String(line.dropFirst(18).dropLast(2)) : line
            do {
                let verified = try verifier.verify(token.trimmingCharacters(in: .whitespaces))
                guard case .transaction(let transaction) = verified else {
                    Issue.record("not a transaction: \(line)")
                    continue
                }
                let payload = String(decoding: try encoder.encode(transaction), as: UTF8.self)
                #expect(answer == #"{"ok":true,"kind":"transaction","payload":\#(payload)}"#)
            } catch let error as IAPError {
                let json = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any]
                let detail = json?["error"] as? [String: Any]
                #expect(answer.hasPrefix(#"{"ok":false,"error":{"code":"#), "\(answer)")
                #expect(detail?["code"] as? String == error.code.rawValue)
                #expect(detail?["message"] as? String == error.message)
            }
        }
    }

    @Test func aPipeIsAnsweredLineByLineAsTheLinesArrive() async throws {
        let bench = try await Workbench(count: 3)
        defer { bench.remove() }
        let process = try Self.launch(
            ["verify", "--batch", "--root", bench.root],
            logFile: bench.directory.appending(path: "batch.log")
        )
        let stdin = try #require(process.standardInput)
        defer { process.kill() }

        // Each answer is read on another thread; the test waits for it before it writes the next line.
        let (answers, arrived) = VerifyBatchCommandTests.readAnswers(process.standardOutput)

        for (index, line) in [bench.tokens[0], "garbage", bench.tokens[1], bench.tokens[2]].enumerated() {
            stdin.write(Data((line + "\n").utf8))
            let answered = await offPool { arrived.wait(timeout: .now() + 30) == .success }
            #expect(answered, "line \(index + 1) was not answered while the input stayed open")
            guard answered else { return }
            let answer = answers.withLock { $0.last } ?? ""
            #expect(answer.hasPrefix(index == 1 ? #"{"ok":false"# : #"{"ok":true"#), "\(answer)")
        }
        try stdin.close()
        #expect(await process.exit(within: .seconds(60)), "iap verify --batch did not end when its input closed")
        #expect(process.terminationStatus == 0)
        #expect(answers.withLock { $0.count } == 4)
    }

    @Test func aLineTooLongToBeSignedDataIsAnsweredWithoutBeingHeld() async throws {
        let bench = try await Workbench(count: 2)
        defer { bench.remove() }
        let long = String(repeating: "A", count: 3_000_000)
        let input = [bench.tokens[0], long, bench.tokens[1], long].joined(separator: "\n")
        let run = try await Self.run(["verify", "--batch", "--root", bench.root], input: Data(input.utf8))
        #expect(run.status == 0)
        #expect(run.stdout.count == 4)
        let tooLong =
            #"{"ok":false,"error":{"code":"malformedSignedData","message":"the line is 3000000 bytes, more than "#
            + #"the 1048576 a line of signed data may hold"}}"#
        #expect(run.stdout.count == 4 && run.stdout[1] == tooLong && run.stdout[3] == tooLong)
        #expect(run.stdout.first?.hasPrefix(#"{"ok":true,"kind":"transaction""#) == true)
        #expect(run.stdout.count == 4 && run.stdout[2].hasPrefix(#"{"ok":true,"kind":"transaction""#))
    }
}
