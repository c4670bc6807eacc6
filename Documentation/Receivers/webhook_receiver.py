# A webhook receiver for `iap serve --grant-url` in Python, standard library only (Documentation/Server.md, "The
# webhook contract"). It checks the signature, applies each idempotency key once, and takes back only what it
# granted. The wallet is a JSON file here; use your database (a unique index on the key, one transaction per call).
#
#   GRANT_SECRET_FILE=/etc/wallet/grant.secret PORT=9090 WALLET_FILE=/var/lib/wallet/wallet.json python3 webhook_receiver.py
import hashlib, hmac, json, os, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

with open(os.environ.get("GRANT_SECRET_FILE", "/etc/wallet/grant.secret"), "rb") as file:
    SECRET = file.read()
SECRET = SECRET[:-2] if SECRET.endswith(b"\r\n") else SECRET.removesuffix(b"\n")  # one trailing newline is not part of it
WALLET_FILE = os.environ.get("WALLET_FILE", "wallet.json")
lock = threading.Lock()  # check and apply atomically: the same key can arrive twice at once
wallet = {"applied": {}, "cancelled": [], "balances": {}}
if os.path.exists(WALLET_FILE):
    with open(WALLET_FILE) as file:
        wallet = json.load(file)


def save():
    with open(WALLET_FILE + ".tmp", "w") as file:
        json.dump(wallet, file, sort_keys=True)
    os.replace(WALLET_FILE + ".tmp", WALLET_FILE)


def add(user, product, units):
    balances = wallet["balances"].setdefault(user, {})
    balances[product] = balances.get(product, 0) + units


def apply(delivery):
    """Applies a grant or a take-back once; returns the HTTP status to answer."""
    key = delivery["idempotencyKey"]
    with lock:
        if key in wallet["applied"] or key in wallet["cancelled"]:
            return 409  # applied before, or a grant whose take-back came first: nothing to do
        if delivery["type"].startswith("app."):
            # An app-level notification (app.rescindConsent, ...): record it; with --on-rescind-consent revoke the
            # server sends the take-backs itself.
            wallet.setdefault("notifications", []).append(
                {"type": delivery["type"], "appTransactionId": delivery.get("appTransactionId")})
        elif delivery["type"] == "grant":
            add(delivery["userId"], delivery["productId"], delivery["units"])
        else:
            grant = delivery.get("grantIdempotencyKey", delivery["transactionId"])
            if grant in wallet["applied"]:
                add(delivery["userId"], delivery["productId"], -delivery["units"])  # units: the refunded share
            else:
                # Take back only what was granted: this grant never arrived (its call was cut off). Take back
                # nothing, and refuse the grant if it arrives late.
                wallet["cancelled"].append(grant)
        wallet["applied"][key] = delivery["type"]
        save()
        return 200


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            fields = dict(part.split("=", 1) for part in self.headers["X-IAP-Signature"].split(","))
            expected = hmac.new(SECRET, fields["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
            valid = hmac.compare_digest(expected, fields["v1"]) and abs(time.time() - int(fields["t"])) < 300
        except (KeyError, ValueError, AttributeError):
            valid = False
        if not valid:
            return self.answer(401)  # retried: fix the secret, and the retry queue or a redelivery delivers
        self.answer(apply(json.loads(body)))

    def answer(self, status):
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PORT", "9090"))), Receiver)
print(f"listening on http://127.0.0.1:{server.server_port}", flush=True)
server.serve_forever()
