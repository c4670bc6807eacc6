// What an old app version sends (Migration.md): its app receipt or transaction receipt, base64, and the app's
// shared secret for verifyReceipt; the id read from one, and a signed transaction the API returned for it.
let receiptBase64: String = assumed()
let transactionReceiptBase64: String = assumed()
let secret: String = assumed()
let transactionId: String = assumed()
let signed: String = assumed()
