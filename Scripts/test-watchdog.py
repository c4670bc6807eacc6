#!/usr/bin/env python3
"""Runs a test command under a watchdog, so that a hung run names itself instead of waiting for ever.

    Scripts/test-watchdog.py [--idle SECONDS] [--limit SECONDS] [--log FILE] -- swift test [options]

The command's output is passed through as it comes. When the command prints nothing for --idle seconds (600 by
default), or runs past --limit seconds (2400 by default), the watchdog prints the tests that started and did not
finish, a thread dump (gdb) of every test process still running, then kills the command and every process it
started (servers under test included, whatever their process group) and exits 124. Otherwise it exits with the
command's status, after killing whatever the command left running (and saying so).

Only Python's standard library and, for the thread dumps, Debian's gdb.
"""

import argparse
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import time

# Swift Testing's lines: "◇ Test NAME started.", "✔ Test NAME passed after …", "✔ Test NAME with 12 test cases passed
# after …", "✘ Test NAME failed after …", "➜ Test NAME skipped…". Test cases of a parameterized test ("Test case
# passing …") and the run itself ("Test run") are not tests of their own.
STARTED = re.compile(r"^\s*\S+ Test (?!case passing |run )(?P<name>.+?) started\.\s*$")
FINISHED = re.compile(
    r"^\s*\S+ Test (?!case passing |run )(?P<name>.+?)(?: with \d+ test cases?)? "
    r"(?:passed after|failed after|skipped\b)"
)
XCTEST_STARTED = re.compile(r"^Test Case '(?P<name>[^']+)' started")
XCTEST_FINISHED = re.compile(r"^Test Case '(?P<name>[^']+)' (passed|failed|skipped)")


def children_of() -> dict:
    """Every live process's children, from /proc."""
    tree: dict = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read().decode("utf-8", "replace")
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: the parent pid is the second field after it.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1:
            tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def descendants(pid: int) -> list:
    tree = children_of()
    found, stack = [], [pid]
    while stack:
        for child in tree.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return "?"


def is_test_process(pid: int) -> bool:
    line = command_line(pid)
    return "PackageTests" in line or ".xctest" in line


def cpu_seconds(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().decode("utf-8", "replace")
        fields = fields[fields.rfind(")") + 2 :].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def dump_threads(pid: int, out) -> None:
    gdb = shutil.which("gdb")
    out.write(f"\n--- threads of pid {pid}: {command_line(pid)[:300]}\n")
    out.write(f"    cpu time so far: {cpu_seconds(pid):.1f} s\n")
    if gdb is None:
        out.write("    (gdb is not installed: apt-get install gdb)\n")
        return
    try:
        result = subprocess.run(
            [gdb, "-p", str(pid), "-batch", "-nx", "-ex", "thread apply all bt 25"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        text = result.stdout.decode("utf-8", "replace")
        # Keep the stacks, drop gdb's chatter about symbol files.
        keep = [line for line in text.splitlines() if line.startswith(("Thread ", "#"))]
        out.write("\n".join(keep or text.splitlines()) + "\n")
    except subprocess.TimeoutExpired:
        out.write("    (gdb did not answer within 120 s)\n")


def start_time(pid: int):
    """The process's start time in clock ticks since boot (to tell a process from a later one with its pid)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read().decode("utf-8", "replace")
        fields = stat[stat.rfind(")") + 2 :].split()
        # A zombie has ended: nothing to kill.
        return None if fields[0] == "Z" else int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def kill_all(known: dict) -> list:
    """Kills the processes of `known` (pid to start time) still alive as themselves; returns their pids."""
    killed = []
    for pid, started in known.items():
        if started is not None and start_time(pid) == started:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except ProcessLookupError:
                pass
    return killed


def become_subreaper() -> None:
    """Processes the command starts and leaves behind are re-parented to this one, not to init (Linux)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def main() -> int:
    parser = argparse.ArgumentParser(
        description="Runs a test command under a watchdog: a run that makes no progress, or runs too long, is "
        "named (unfinished tests, thread dumps), killed with everything it started, and fails (exit 124)."
    )
    parser.add_argument("--idle", type=float, default=600, help="seconds without output before the run is a hang")
    parser.add_argument("--limit", type=float, default=2400, help="seconds the whole run may take")
    parser.add_argument("--log", help="also write the command's output to this file")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command, e.g. swift test")
    options = parser.parse_args()
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    if not command:
        parser.error("no command: give it after --, e.g. Scripts/test-watchdog.py -- swift test")

    log = open(options.log, "w", encoding="utf-8") if options.log else None
    become_subreaper()
    start = time.monotonic()
    # Line-buffered output (coreutils' stdbuf), so that what a hung test process wrote last is not stuck in its
    # buffer: the list of unfinished tests is then exact.
    stdbuf = shutil.which("stdbuf")
    launched = [stdbuf, "-oL", "-eL", *command] if stdbuf else command
    child = subprocess.Popen(
        launched, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
    )
    running: dict = {}
    selector = selectors.DefaultSelector()
    selector.register(child.stdout, selectors.EVENT_READ)
    last_output = time.monotonic()
    pending = b""
    reason = None
    known: dict = {}
    last_scan = 0.0
    while True:
        now = time.monotonic()
        if now - last_output > options.idle:
            reason = f"no output for {options.idle:.0f} s"
        elif now - start > options.limit:
            reason = f"still running after {options.limit:.0f} s"
        if reason:
            break
        # Remember every process the command started, while they live: a server under test may outlive its test
        # process, in a process group of its own.
        if now - last_scan > 1:
            last_scan = now
            for pid in descendants(os.getpid()):
                known.setdefault(pid, start_time(pid))
        events = selector.select(timeout=5)
        if not events:
            if child.poll() is not None:
                break
            continue
        chunk = os.read(child.stdout.fileno(), 65536)
        if not chunk:
            break
        last_output = time.monotonic()
        sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
        if log:
            log.write(chunk.decode("utf-8", "replace"))
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for raw in lines:
            line = raw.decode("utf-8", "replace")
            for started, finished in ((STARTED, FINISHED), (XCTEST_STARTED, XCTEST_FINISHED)):
                match = started.match(line)
                if match:
                    running[match.group("name")] = time.monotonic()
                    break
                match = finished.match(line)
                if match:
                    running.pop(match.group("name"), None)
                    break

    out = sys.stdout
    if reason:
        elapsed = time.monotonic() - start
        out.write(f"\n==> watchdog: {reason} ({elapsed:.0f} s in all): the run is hung; killing it\n")
        out.write(f"==> tests started and not finished ({len(running)}):\n")
        for name, since in sorted(running.items(), key=lambda item: item[1]):
            out.write(f"    {name} (started {elapsed - (since - start):.0f} s ago)\n")
        alive = descendants(os.getpid())
        tests = [pid for pid in alive if is_test_process(pid)]
        out.write(f"==> processes still running ({len(alive)}):\n")
        for pid in alive:
            out.write(f"    {pid} {command_line(pid)[:200]}\n")
        for pid in tests:
            dump_threads(pid, out)
        out.flush()
        for pid in alive:
            known.setdefault(pid, start_time(pid))
        kill_all(known)
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        child.wait()
        out.write("==> watchdog: killed the run and every process it started\n")
        return 124

    status = child.wait()
    for pid in descendants(os.getpid()):
        known.setdefault(pid, start_time(pid))
    def still_alive() -> dict:
        return {pid: started for pid, started in known.items() if started is not None and start_time(pid) == started}

    # What stops by itself once the tests are done (a database server's watcher) gets a little time to.
    deadline = time.monotonic() + 15
    left = still_alive()
    while left and time.monotonic() < deadline:
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.5)
        left = still_alive()
    if left:
        out.write(f"\n==> watchdog: the run left {len(left)} process(es) running; killing them:\n")
        for pid in sorted(left):
            out.write(f"    {pid} {command_line(pid)[:200]}\n")
        kill_all(left)
        # Reap the ones re-parented here.
        for _ in left:
            try:
                os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
    out.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
