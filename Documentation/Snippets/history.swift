// A customer's purchase family, and the revision of Apple's history the last sync reached (ServerAPI.md).
let originalTransactionId: String = assumed()
var savedRevision: String? = assumed()
/// An answer body the test scripts.
let json: String = assumed()
