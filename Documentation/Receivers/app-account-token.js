"use strict";
const crypto = require("crypto");

// The appAccountToken of a user, as swift-iap's AppAccountToken.derive(from:namespace:) makes it: the version 5
// (name-based, SHA-1) UUID of the user id's UTF-8 bytes in the apps' namespace UUID, lowercase.
function appAccountToken(userId, namespace) {
  const digest = crypto.createHash("sha1")
    .update(Buffer.from(namespace.replace(/-/g, ""), "hex"))
    .update(Buffer.from(userId, "utf8"))
    .digest();
  digest[6] = (digest[6] & 0x0f) | 0x50; // version 5
  digest[8] = (digest[8] & 0x3f) | 0x80; // RFC 9562 variant
  const hex = digest.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

module.exports = { appAccountToken };
if (require.main === module) {
  console.log(appAccountToken(process.argv[3], process.argv[2]));
}
