// A webhook receiver for `iap serve --grant-url` in Node, no packages (Documentation/Server.md, "The webhook
// contract"). It checks the signature, applies each idempotency key once, and takes back only what it granted. The
// wallet is a JSON file here; use your database (a unique index on the key, one transaction per call).
//
//   GRANT_SECRET_FILE=/etc/wallet/grant.secret PORT=9090 WALLET_FILE=/var/lib/wallet/wallet.json node webhook-receiver.js
"use strict";
const crypto = require("crypto"), fs = require("fs"), http = require("http");

// As iap reads it: one trailing newline is not part of the secret.
const secret = fs.readFileSync(process.env.GRANT_SECRET_FILE || "/etc/wallet/grant.secret")
  .toString("latin1").replace(/\r?\n$/, "");
const walletFile = process.env.WALLET_FILE || "wallet.json";
// Node runs one callback at a time, so each check-and-apply below is atomic.
const wallet = fs.existsSync(walletFile)
  ? JSON.parse(fs.readFileSync(walletFile, "utf8"))
  : { applied: {}, cancelled: [], balances: {} };

function save() {
  fs.writeFileSync(walletFile + ".tmp", JSON.stringify(wallet));
  fs.renameSync(walletFile + ".tmp", walletFile);
}

function add(user, product, units) {
  const balances = (wallet.balances[user] ||= {});
  balances[product] = (balances[product] || 0) + units;
}

// Applies a grant or a take-back once; returns the HTTP status to answer.
function apply(delivery) {
  const key = delivery.idempotencyKey;
  if (key in wallet.applied || wallet.cancelled.includes(key)) {
    return 409; // applied before, or a grant whose take-back came first: nothing to do
  }
  if (delivery.type.startsWith("app.")) {
    // An app-level notification (app.rescindConsent, ...): record it; with --on-rescind-consent revoke the server
    // sends the take-backs itself.
    (wallet.notifications ||= []).push({ type: delivery.type, appTransactionId: delivery.appTransactionId });
  } else if (delivery.type === "grant") {
    add(delivery.userId, delivery.productId, delivery.units);
  } else {
    const grant = delivery.grantIdempotencyKey ?? delivery.transactionId;
    if (grant in wallet.applied) {
      add(delivery.userId, delivery.productId, -delivery.units); // units: the refunded share
    } else {
      // Take back only what was granted: this grant never arrived (its call was cut off). Take back nothing, and
      // refuse the grant if it arrives late.
      wallet.cancelled.push(grant);
    }
  }
  wallet.applied[key] = delivery.type;
  save();
  return 200;
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const fields = Object.fromEntries(
      (req.headers["x-iap-signature"] || "").split(",").map((part) => {
        const at = part.indexOf("=");
        return [part.slice(0, at), part.slice(at + 1)];
      })
    );
    const expected = crypto.createHmac("sha256", Buffer.from(secret, "latin1"))
      .update(`${fields.t}.`).update(body).digest("hex");
    const valid = typeof fields.v1 === "string" && fields.v1.length === expected.length &&
      crypto.timingSafeEqual(Buffer.from(expected), Buffer.from(fields.v1)) &&
      Math.abs(Date.now() / 1000 - Number(fields.t)) < 300;
    if (!valid) {
      res.writeHead(401).end(); // retried: fix the secret, and the retry queue or a redelivery delivers
      return;
    }
    res.writeHead(apply(JSON.parse(body))).end();
  });
});
server.listen(Number(process.env.PORT || 9090), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
