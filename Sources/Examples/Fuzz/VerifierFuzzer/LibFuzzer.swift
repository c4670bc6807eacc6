#if FUZZING
    import CIAPFuzzerDriver

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// The libFuzzer callback, exported under the name libFuzzer looks for.
    @_cdecl("LLVMFuzzerTestOneInput")
    func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        FuzzEntry.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
        return 0
    }

    /// The fuzzing build's `main`: hands the command line to libFuzzer.
    ///
    /// SwiftPM links every executable target with `main` aliased to the module's own entry point, so libFuzzer's
    /// `main` cannot be used; `LLVMFuzzerRunDriver` is libFuzzer's entry for programs with their own `main`.
    @main
    enum FuzzMain {
        static func main() {
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzTestOneInput))
        }
    }
#endif
