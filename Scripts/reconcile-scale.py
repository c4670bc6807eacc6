#!/usr/bin/env python3
"""Peak memory and time of `iap reconcile` walking a large PostgreSQL ledger, as whole processes.

Runs against the ledgers `iap-bench store --database URL --scale N,...` leaves in the schemas `iap_scale_<N>`
(delivered consumables of com.example.app in Production, transaction ids from 3000000000000000, every one of one
Apple account). An `iap emulate --environment Production --first-transaction-id 3000000000000000` sells the first
of them again, so the walk's first family is answered by the App Store it asks; the rest of the ledger is the same
account's, so the walk visits every family and skips each with its history already answered: what is measured is
the walk of the ledger itself, a page at a time, and what it holds in memory.

    python3 Scripts/reconcile-scale.py --iap .build/release/iap --database "$URL" --schema iap_scale_1000000 \
        --runs 3 [--mode all|subscriptions]

Each run is `/usr/bin/time -v iap reconcile --database URL --schema S ... --all --ledger-only --json`; the output
is one JSON object: the runs' elapsed seconds and peak resident memory (MB), their medians, and each run's summary.
The password goes in PGPASSWORD, never on the command line.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import urllib.request

BUNDLE_ID = "com.example.app"
ISSUER = "57246542-96fe-1a63-e053-0824d011072a"
KEY_ID = "ABCDEFGHIJ"
FIRST_ID = "3000000000000000"


def start_emulator(iap, directory):
    key = os.path.join(directory, "AuthKey.p8")
    subprocess.run(
        ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    process = subprocess.Popen(
        [iap, "emulate", "--port", "0", "--bundle-id", BUNDLE_ID, "--issuer-id", ISSUER, "--key-id", KEY_ID,
         "--auth-key", key, "--environment", "Production", "--first-transaction-id", FIRST_ID],
        stdout=subprocess.PIPE,
        text=True,
    )
    base = process.stdout.readline().strip().removeprefix("listening on ")
    token = process.stdout.readline().strip().removeprefix("control token: ")
    if not base.startswith("http://"):
        process.kill()
        sys.exit(f"reconcile-scale: iap emulate did not start ({base!r})")
    return process, base, token, key


def control(base, token, path, body=None):
    request = urllib.request.Request(
        base + "/emulator/v1" + path,
        data=None if body is None else json.dumps(body).encode(),
        headers={"X-Emulator-Control-Token": token, "Content-Type": "application/json"},
        method="GET" if body is None else "POST",
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.read()


def measure(arguments, base, key, root):
    command = [
        "/usr/bin/time", "-v", arguments.iap, "reconcile", "--database", arguments.database,
        "--schema", arguments.schema, "--issuer-id", ISSUER, "--key-id", KEY_ID, "--auth-key", key,
        "--bundle-id", BUNDLE_ID, "--environment", "Production", "--app-apple-id", "1234567890", "--api-url", base,
        "--root", root,
        "--" + arguments.mode, "--ledger-only", "--json",
    ]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"reconcile-scale: iap reconcile exited {run.returncode}:\n{run.stderr[-2000:]}")
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr).group(1))
    clock = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", run.stderr).group(1)
    seconds = 0.0
    for part in clock.split(":"):
        seconds = seconds * 60 + float(part)
    return {"seconds": seconds, "peakResidentMB": peak / 1024, "summary": json.loads(run.stdout)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iap", required=True, help="the iap executable (a release build)")
    parser.add_argument("--database", required=True, help="postgres://user@host:port/db (password in PGPASSWORD)")
    parser.add_argument("--schema", required=True, help="a schema iap-bench store --scale loaded")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mode", choices=["all", "subscriptions"], default="all")
    parser.add_argument("--emulator", help="the iap that runs iap emulate (default: --iap)")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        emulator, base, token, key = start_emulator(arguments.emulator or arguments.iap, directory)
        try:
            sold = json.loads(control(base, token, "/purchases", {"productId": "coins.100"}))
            if sold["transactionId"] != FIRST_ID:
                sys.exit(f"reconcile-scale: the emulator sold {sold['transactionId']}, not {FIRST_ID}")
            root = os.path.join(directory, "root.der")
            with open(root, "wb") as file:
                file.write(control(base, token, "/root-certificate"))
            runs = []
            for index in range(arguments.runs):
                print(f"reconcile-scale: {arguments.schema} run {index + 1}/{arguments.runs}", file=sys.stderr)
                runs.append(measure(arguments, base, key, root))
                print(f"reconcile-scale: {runs[-1]['seconds']:.1f} s, {runs[-1]['peakResidentMB']:.1f} MB",
                      file=sys.stderr)
        finally:
            emulator.terminate()
            emulator.wait(timeout=10)
    print(json.dumps({
        "benchmark": "reconcile-scale",
        "schema": arguments.schema,
        "mode": arguments.mode,
        "runs": runs,
        "secondsMedian": statistics.median(run["seconds"] for run in runs),
        "peakResidentMBMax": max(run["peakResidentMB"] for run in runs),
        "peakResidentMBMedian": statistics.median(run["peakResidentMB"] for run in runs),
    }, indent=2))


if __name__ == "__main__":
    main()
