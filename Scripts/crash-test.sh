#!/usr/bin/env bash
# Crash test of the file ledger: ingests thousands of signed transactions with `iap ledger ingest`, kills it
# with SIGKILL at random points many times, restarts it on the same input each time, and then asserts:
#   - every transaction that was ever ACKed is in the ledger and delivered, and each run ACKed in input order;
#   - nothing is recorded or delivered twice (one entry per transaction id, one grant per entry): every grant goes
#     to a webhook receiver (--grant-url), which checks each signature and logs each idempotency key it was sent;
#   - `iap ledger check` passes.
#
#   Scripts/crash-test.sh                  the full run: 5000 transactions, 40 kills
#   Scripts/crash-test.sh --short          what CI runs: 1500 transactions, 12 kills
#
# Environment: CRASH_TRANSACTIONS, CRASH_KILLS, CRASH_SEED, CRASH_WINDOW (ingest's --window, default 64: lines in
# flight at once), IAP (path of a built iap; default: swift build).
set -euo pipefail
cd "$(dirname "$0")/.."

transactions=${CRASH_TRANSACTIONS:-5000}
kills=${CRASH_KILLS:-40}
window=${CRASH_WINDOW:-64}
if [ "${1:-}" = "--short" ]; then
    transactions=${CRASH_TRANSACTIONS:-1500}
    kills=${CRASH_KILLS:-12}
fi
RANDOM=${CRASH_SEED:-$$}

if [ -z "${IAP:-}" ]; then
    swift build --product iap >/dev/null
    IAP="$(swift build --show-bin-path)/iap"
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/iap-crash.XXXXXX")
receiver=""
trap 'if [ -n "$receiver" ]; then kill "$receiver" 2>/dev/null || true; fi; rm -rf "$work"' EXIT

# The wallet: a webhook receiver on loopback that checks every X-IAP-Signature (HMAC-SHA256 over "<t>.<body>",
# keyed by the secret file without its trailing newline) and logs "grant KEY" or "revoke KEY" for each request.
printf 'crash-test-shared-secret-of-32-bytes\n' > "$work/secret"
chmod 600 "$work/secret"
python3 - "$work/secret" "$work/grants.log" "$work/receiver.port" <<'PY' &
import hashlib, hmac, http.server, json, sys
secret = open(sys.argv[1], "rb").read().rstrip(b"\n")
log = open(sys.argv[2], "a")
class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        parts = dict(p.split("=", 1) for p in self.headers.get("X-IAP-Signature", "").split(",") if "=" in p)
        expected = hmac.new(secret, parts.get("t", "").encode() + b"." + body, hashlib.sha256).hexdigest()
        if len(body) < length:
            # The sender was killed while it sent the body: nothing to grant, and nobody is left to answer.
            log.write("truncated -\n")
            status = 400
        elif not hmac.compare_digest(expected, parts.get("v1", "")):
            log.write("bad-signature -\n")
            status = 401
        else:
            log.write(f"{json.loads(body)['type']} {self.headers['Idempotency-Key']}\n")
            status = 200
        log.flush()
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
with open(sys.argv[3] + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
server.serve_forever()
PY
receiver=$!
for _ in $(seq 1 200); do [ -s "$work/receiver.port" ] && break; sleep 0.05; done
grant_url="http://127.0.0.1:$(cat "$work/receiver.port")/iap/deliveries"

echo "==> $transactions signed transactions"
"$IAP" testdata transactions --count "$transactions" --root-out "$work/root.der" \
    --catalog-out "$work/catalog.json" > "$work/tokens.txt"

# Run as a direct child (not a shell function in a subshell), so that SIGKILL hits the ingesting process.
# A small compaction threshold makes kills land around compactions too; the receiver logs every idempotency key
# the fulfillment hook sent, so a second grant would show.
ingest=("$IAP" ledger ingest --data "$work/ledger" --catalog "$work/catalog.json" --root "$work/root.der"
    --bundle-id com.example.app --environment Sandbox --token-is-user --compaction-threshold 262144 --window "$window"
    --grant-url "$grant_url" --grant-secret-file "$work/secret" "$work/tokens.txt")

echo "==> $kills runs killed with SIGKILL at random points"
for run in $(seq 1 "$kills"); do
    "${ingest[@]}" > "$work/acks-$run.txt" 2>>"$work/stderr.txt" &
    pid=$!
    # Kill after a random number of ACKs anywhere in the input (a restarted run goes quickly over what is
    # already recorded), or, one run in four, at a random moment of its start-up (open, replay, recovery).
    if [ $((RANDOM % 4)) -eq 0 ]; then
        sleep "0.$(printf '%03d' $((RANDOM % 300)))"
    else
        target=$(( (RANDOM * 32768 + RANDOM) % transactions + 1 ))
        for _ in $(seq 1 4000); do
            [ "$(cat "$work/acks-$run.txt" 2>/dev/null | wc -l)" -ge "$target" ] && break
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.005
        done
    fi
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    acked=$(grep -c '^ACK ' "$work/acks-$run.txt" || true)
    echo "    run $run: killed after $acked ACKs"
done

echo "==> a last run to completion"
"${ingest[@]}" > "$work/acks-final.txt" 2>>"$work/stderr.txt"

cat "$work"/acks-*.txt | grep -E '^ACK [0-9]+ [a-zA-Z]+$' | awk '{print $2}' | sort -u > "$work/acked.txt"
if grep -q '^REJECT ' "$work"/acks-*.txt; then
    echo "FAIL: some lines were rejected:" >&2
    grep -h '^REJECT ' "$work"/acks-*.txt | head >&2
    exit 1
fi
"$IAP" ledger export --data "$work/ledger" > "$work/export.jsonl"

python3 - "$work" "$transactions" "$kills" "$window" <<'PY'
import collections, json, sys
work, expected, kills, window = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
entries = [json.loads(line) for line in open(f"{work}/export.jsonl")]
ids = [e["transactionId"] for e in entries]
acked = {line.strip() for line in open(f"{work}/acked.txt") if line.strip()}
failures = []
if len(ids) != len(set(ids)):
    failures.append(f"{len(ids) - len(set(ids))} transactions are recorded twice")
if len(set(ids)) != expected:
    failures.append(f"the ledger holds {len(set(ids))} transactions, the input {expected}")
missing = acked - set(ids)
if missing:
    failures.append(f"{len(missing)} ACKed transactions are missing, e.g. {sorted(missing)[:3]}")
# Each run answers in input order (the generated ids increase line by line), however many lines were in flight.
import glob
for path in sorted(glob.glob(f"{work}/acks-*.txt")):
    answered = [int(line.split()[1]) for line in open(path) if line.startswith("ACK ")]
    if any(later <= earlier for earlier, later in zip(answered, answered[1:])):
        failures.append(f"{path.rsplit('/', 1)[-1]} answers out of input order")
undelivered = [e["transactionId"] for e in entries if e["deliveryState"] != "delivered" or "deliveredAt" not in e]
if undelivered:
    failures.append(f"{len(undelivered)} transactions are not delivered, e.g. {undelivered[:3]}")
regranted = [e["transactionId"] for e in entries if e.get("grantGeneration", 0) != 0]
if regranted:
    failures.append(f"{len(regranted)} transactions were granted more than once")
lines = [line.split() for line in open(f"{work}/grants.log") if line.strip()]
if any(kind == "bad-signature" for kind, _ in lines):
    failures.append("the webhook receiver got requests with a bad signature")
# A body cut short happens only when a kill lands while a request is being sent: at most the lines in flight.
truncated = sum(1 for kind, _ in lines if kind == "truncated")
if truncated > kills * window:
    failures.append(f"{truncated} requests cut short after only {kills} kills of {window} lines in flight")
grants = collections.Counter(key for kind, key in lines if kind == "grant")
if set(grants) != set(ids):
    failures.append(f"the hook was asked to grant {len(grants)} keys for {len(set(ids))} transactions")
# A key may reach the hook twice only when a kill landed between the hook and the ledger recording it: at most
# one per line in flight (--window) per kill.
repeated = sum(count - 1 for count in grants.values())
if repeated > kills * window:
    failures.append(f"{repeated} repeated grant keys after only {kills} kills of {window} lines in flight")
if any(":" in key for key in grants):
    failures.append("a grant was repeated under a new idempotency key")
for failure in failures:
    print("FAIL:", failure, file=sys.stderr)
if failures:
    sys.exit(1)
print(f"    {len(ids)} transactions, {len(acked)} distinct ACKed ids, all present and delivered; "
      f"{len(grants)} grant keys, {repeated} repeated across kills (idempotent by key)")
PY

"$IAP" ledger check --data "$work/ledger"
"$IAP" ledger stats --data "$work/ledger"
echo "crash test passed"
