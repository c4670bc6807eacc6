#!/usr/bin/env bash
# A throw-away PostgreSQL server on loopback, for the tests and benchmarks of IAPStoragePostgres.
#
#   Scripts/postgres-server.sh start [--stop-after PID]
#                                       initdb a temporary data directory, start the server, print its URL;
#                                       with --stop-after, a watcher stops it once process PID has exited
#   Scripts/postgres-server.sh stop     stop the server and delete the data directory
#   Scripts/postgres-server.sh url      print the URL of a running server
#
# The URL is what the tests read from IAP_TEST_POSTGRES_URL:
#   export IAP_TEST_POSTGRES_URL=$(Scripts/postgres-server.sh start)
# Environment: IAP_POSTGRES_DIR (default /tmp/iap-postgres-$PORT), IAP_POSTGRES_PORT (default 54329).
# PostgreSQL refuses to run as root, so as root the server runs as the user `postgres` (created by the
# Debian package) and the data directory belongs to it. The server is for tests: it trusts nobody on TCP
# without the password, and it keeps fsync on, so durability figures measured against it are real.
set -euo pipefail

port=${IAP_POSTGRES_PORT:-54329}
base=${IAP_POSTGRES_DIR:-${TMPDIR:-/tmp}/iap-postgres-$port}
user=iap
password=iap
url="postgres://$user:$password@127.0.0.1:$port/postgres"

# initdb and pg_ctl: from PATH, else the newest Debian installation.
bindir=""
if ! command -v initdb >/dev/null 2>&1 || ! command -v pg_ctl >/dev/null 2>&1; then
    bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$bindir" ]; then
        echo "error: initdb and pg_ctl not found; install the postgresql package" >&2
        exit 1
    fi
    bindir="$bindir/"
fi

as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

running() {
    [ -f "$base/data/postmaster.pid" ] && as_owner "${bindir}pg_ctl" -D "$base/data" status >/dev/null 2>&1
}

# Closes every descriptor this script inherited beyond stdin, stdout and stderr (and bash's own 255), so that the
# server and the watcher, which outlive the script, hold none of the caller's: a caller waiting for the end of its
# child's pipes or sockets (Foundation's Process does) would otherwise wait for the server.
close_inherited() {
    local fd
    for fd in $(ls /proc/$$/fd 2>/dev/null); do
        if [ "$fd" -gt 2 ] && [ "$fd" != 255 ]; then
            eval "exec $fd>&-" 2>/dev/null || true
        fi
    done
}

# Several test processes may share one server (a new one reuses the running server), so each process that asked
# for it is recorded in $base.holders, and the server stops once none of them is alive. A lock ($base.lock) orders
# a start that joins the server against a watcher that stops it. No process that outlives this script may keep the
# lock's descriptor, so the server and the watcher are started with it closed.
lockfile="$base.lock"
holders="$base.holders"

take_lock() {
    exec 9>"$lockfile"
    flock 9
}

any_holder_alive() {
    local pid
    for pid in $(cat "$holders" 2>/dev/null); do
        if kill -0 "$pid" 2>/dev/null; then
            return 0
        fi
    done
    return 1
}

# Records a process as a user of the server, and starts the watcher (one per server is enough; more are harmless).
hold_for() {
    echo "$1" >>"$holders"
    IAP_POSTGRES_PORT=$port IAP_POSTGRES_DIR=$base nohup "$0" watch >/dev/null 2>&1 9>&- &
}

case "${1:-}" in
start)
    close_inherited
    stop_after=""
    if [ "${2:-}" = "--stop-after" ]; then
        stop_after=${3:?--stop-after needs a process id}
    fi
    take_lock
    if running; then
        if [ -n "$stop_after" ]; then
            hold_for "$stop_after"
        fi
        echo "$url"
        exit 0
    fi
    rm -rf "$base" "$holders"
    mkdir -p "$base"
    printf '%s\n' "$password" >"$base/password"
    if [ "$(id -u)" = 0 ]; then
        chown -R postgres:postgres "$base"
    fi
    chmod 700 "$base"
    as_owner "${bindir}initdb" -D "$base/data" -U "$user" --pwfile="$base/password" \
        --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$base/initdb.log" 2>&1 || {
        cat "$base/initdb.log" >&2
        exit 1
    }
    as_owner "${bindir}pg_ctl" -D "$base/data" -l "$base/server.log" -w -t 60 \
        -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$base -c max_connections=400" \
        start >/dev/null 9>&- || {
        cat "$base/server.log" >&2
        exit 1
    }
    if [ -n "$stop_after" ]; then
        hold_for "$stop_after"
    fi
    echo "$url"
    ;;
watch)
    # Internal: started by `start --stop-after`; stops the server once no recorded process is alive.
    while :; do
        sleep 2
        take_lock
        if ! any_holder_alive; then
            if running; then
                as_owner "${bindir}pg_ctl" -D "$base/data" -m fast -w stop >/dev/null 9>&-
            fi
            rm -rf "$base" "$holders"
            exit 0
        fi
        exec 9>&-
    done
    ;;
stop)
    if running; then
        as_owner "${bindir}pg_ctl" -D "$base/data" -m fast -w stop >/dev/null
    fi
    rm -rf "$base" "$holders"
    ;;
url)
    running || {
        echo "error: no server runs in $base" >&2
        exit 1
    }
    echo "$url"
    ;;
*)
    echo "usage: Scripts/postgres-server.sh start|stop|url" >&2
    exit 2
    ;;
esac
