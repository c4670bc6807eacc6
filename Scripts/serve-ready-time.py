#!/usr/bin/env python3
"""Times `iap serve --data DIR` from the process start to the first `GET /readyz` that answers 200, and reads its
peak resident memory (VmHWM) then: what Documentation/Benchmarks.md quotes for a large file ledger.

Usage: Scripts/serve-ready-time.py [--runs N] IAP DIR

IAP is the `iap` executable (build it with `swift build -c release --product iap`), DIR a file ledger, such as one
`iap-bench store --transactions 1000000 --dir D` built (D/ledger-1000000). Give a copy: the server opens the ledger
for writing. Each run starts `iap serve --ledger-only` on 127.0.0.1 and a free port with secrets of its own (files
0600 in a private temporary directory), waits for ready, stops it with SIGTERM; prints each run and the median.
"""

import argparse
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path


def private_file(directory: Path, name: str, content: str) -> Path:
    path = directory / name
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(content)
    return path


def one_run(iap: str, data: str, directory: Path) -> tuple:
    jwt = private_file(directory, f"jwt-{secrets.token_hex(4)}", secrets.token_hex(32))
    token = private_file(directory, f"token-{secrets.token_hex(4)}", secrets.token_hex(32))
    log = directory / "serve.log"
    began = time.monotonic()
    with open(log, "w") as errors:
        server = subprocess.Popen(
            [
                iap, "serve", "--port", "0", "--data", data, "--bundle-id", "com.example.app",
                "--environment", "Production", "--app-apple-id", "1234567890", "--ledger-only",
                "--user-jwt-secret-file", str(jwt), "--service-token-file", str(token),
            ],
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
    try:
        line = server.stdout.readline().strip()
        if not line:
            raise SystemExit(f"iap serve printed no address:\n{log.read_text()}")
        url = line.split(" ")[-1]
        while True:
            try:
                with urllib.request.urlopen(url + "/readyz", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None:
                raise SystemExit(f"iap serve exited with status {server.returncode}:\n{log.read_text()}")
            time.sleep(0.02)
        ready = time.monotonic() - began
        status = Path(f"/proc/{server.pid}/status").read_text()
        peak = next(line for line in status.splitlines() if line.startswith("VmHWM"))
        peak_mb = int(peak.split()[1]) / 1024
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            server.wait()
    return ready, peak_mb


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs, 1 to 100 (default 3)")
    parser.add_argument("iap", help="the iap executable")
    parser.add_argument("data", help="the file ledger's directory (a copy)")
    arguments = parser.parse_args()
    if not 1 <= arguments.runs <= 100:
        parser.error("--runs takes 1 to 100")
    if not os.access(arguments.iap, os.X_OK):
        parser.error(f"{arguments.iap} is not an executable")
    if not Path(arguments.data).is_dir():
        parser.error(f"{arguments.data} is not a directory")
    times = []
    with tempfile.TemporaryDirectory(prefix="iap-serve-ready-") as directory:
        for run in range(1, arguments.runs + 1):
            ready, peak = one_run(arguments.iap, arguments.data, Path(directory))
            times.append(ready)
            print(f"run {run}: ready after {ready:.2f} s, peak resident {peak:.1f} MB", flush=True)
    print(f"median: {statistics.median(times):.2f} s over {len(times)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
