// What App Store Connect gives for the App Store Server API (ServerAPI.md): the in-app purchase key's `.p8`
// text and the issuer id.
let p8Text: String = assumed()
let issuerId: String = assumed()
