#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import IAPCore

extension StoreLoader {
    mutating func checkSignedFile(_ manifest: StoreManifest?, listing: StoreFiles.Listing) throws {
        guard let expected = manifest?.signed else { return }
        let name = StoreFiles.signedName(expected.generation)
        guard listing.signed.contains(expected.generation) else {
            report(
                .damage,
                file: name,
                "the signed-transaction file is missing: the manifest names it, with \(expected.records) records"
            )
            return
        }
        try SystemFile.refuseLink(at: files.signed(expected.generation))
        var status = stat()
        guard stat(files.signed(expected.generation), &status) == 0 else {
            throw SystemFile.failure("stat", files.signed(expected.generation))
        }
        let size = Int(status.st_size)
        if size < expected.bytes {
            report(
                .damage,
                file: name,
                offset: size,
                "the signed-transaction file is \(size) bytes, shorter than the \(expected.bytes) the manifest commits"
            )
        } else if size > expected.bytes {
            report(
                .note,
                file: name,
                offset: expected.bytes,
                "\(size - expected.bytes) bytes after the committed end, appended by an interrupted compaction; an "
                    + "open cuts them"
            )
            recovery.cutSignedBytes = size - expected.bytes
        }
    }
}
