#if !FUZZING
    import Foundation

    /// The corpus replayer: runs the fuzz entry on every file given, or under every directory given.
    ///
    /// ```
    /// IAPFuzzVerifier [--verbose] Tests/Fuzz/corpus/verifier [more files or directories]
    /// IAPFuzzVerifier --write-seeds DIR
    /// ```
    ///
    /// A crash in the entry is a crash of this process, so a successful run means every input passed.
    @main
    enum Replayer {
        static func main() {
            let arguments = Array(CommandLine.arguments.dropFirst())
            if arguments.first == "--write-seeds" {
                guard arguments.count == 2 else {
                    fail("usage: IAPFuzzVerifier --write-seeds DIR")
                }
                do {
                    try SeedWriter.write(to: arguments[1])
                } catch {
                    fail("error: \(error)")
                }
                return
            }
            guard !arguments.isEmpty, !arguments.contains(where: { $0 == "-h" || $0 == "--help" }) else {
                fail("usage: IAPFuzzVerifier [--verbose] FILE_OR_DIR... | --write-seeds DIR")
            }
            let verbose = arguments.first == "--verbose"
            var files: [String] = []
            for argument in arguments.dropFirst(verbose ? 1 : 0) {
                files += inputs(at: argument)
            }
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else {
                    fail("error: cannot read \(file)")
                }
                data.withUnsafeBytes { FuzzEntry.run($0) }
                if verbose {
                    print("\(file): \(data.withUnsafeBytes { FuzzEntry.outcome($0) })")
                }
            }
            print("replayed \(files.count) inputs, 0 crashes")
        }

        /// The regular files at a path: the file itself, or every file under a directory, sorted.
        private static func inputs(at path: String) -> [String] {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                fail("error: no such file or directory: \(path)")
            }
            guard isDirectory.boolValue else { return [path] }
            guard let enumerator = FileManager.default.enumerator(atPath: path) else {
                fail("error: cannot list \(path)")
            }
            var files: [String] = []
            while let relative = enumerator.nextObject() as? String {
                let full = path + "/" + relative
                var nested: ObjCBool = false
                if FileManager.default.fileExists(atPath: full, isDirectory: &nested), !nested.boolValue {
                    files.append(full)
                }
            }
            return files.sorted()
        }

        private static func fail(_ message: String) -> Never {
            FileHandle.standardError.write(Data((message + "\n").utf8))
            exit(2)
        }
    }

#endif
