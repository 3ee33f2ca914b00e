# Shared helpers for the scripts under tools/ that run inside the dev root
# (or natively on a machine with PostgreSQL 19, see README).
# shellcheck shell=bash

VEXEC_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${VEXEC_HOME:=${HOME}}"
VEXEC_STATE=${VEXEC_STATE:-$VEXEC_HOME/vexec-state}
mkdir -p "$VEXEC_STATE"

say() { printf '\033[1m[vexec]\033[0m %s\n' "$*" >&2; }
die() { printf '[vexec] ERROR: %s\n' "$*" >&2; exit 1; }

# pg_config of PostgreSQL major version $1: the dev root's Debian layout, or
# whatever pg_config is on PATH when it reports that version.
pg_config_of() {
    local v=$1
    if [ -x "/usr/lib/postgresql/$v/bin/pg_config" ]; then
        echo "/usr/lib/postgresql/$v/bin/pg_config"
    elif command -v pg_config >/dev/null && pg_config --version | grep -q "PostgreSQL $v"; then
        command -v pg_config
    else
        die "no PostgreSQL $v (pg_config) found"
    fi
}

pg_bindir() { "$(pg_config_of "$1")" --bindir; }

# pg_regress ships with the server development files (PGXS).
pg_regress_of() {
    local pgxs
    pgxs=$("$(pg_config_of "$1")" --pgxs)
    echo "$(dirname "$pgxs")/../test/regress/pg_regress"
}

# Build vexec and install it into PostgreSQL $1 (debug build unless
# VEXEC_PROFILE=release).
install_vexec() {
    install_crate vexec "$1"
}

# The optional features vexec is built with: `orca` where ORCA is installed
# (the dev root's orca step; docs/orca.md).
vexec_features() {
    if [ -f "${ORCA_PREFIX:-/usr/local}/include/gpopt/version.h" ]; then echo orca; fi
}

# install_crate CRATE V: build and install one of the extension crates
# (vexec, vexec_flight) into PostgreSQL V.
install_crate() {
    local crate=$1 v=$2 args=()
    [ "${VEXEC_PROFILE:-debug}" = release ] && args+=(--release)
    if [ "$crate" = vexec ] && [ -n "$(vexec_features)" ]; then args+=(--features "$(vexec_features)"); fi
    say "building and installing $crate into PostgreSQL $v (${VEXEC_PROFILE:-debug})"
    # A running server has the library mapped: move it aside (a new inode)
    # rather than let the install overwrite it in place.
    local libdir log=$VEXEC_STATE/install-$crate-pg$v.log
    libdir=$("$(pg_config_of "$v")" --pkglibdir)
    [ -f "$libdir/$crate.so" ] && mv -f "$libdir/$crate.so" "$libdir/$crate.so.previous"
    (cd "$VEXEC_REPO/$crate" && cargo pgrx install --pg-config "$(pg_config_of "$v")" "${args[@]}" >"$log" 2>&1) || {
        tail -n 40 "$log" >&2
        die "cargo pgrx install failed for $crate, PostgreSQL $v (log: $log)"
    }
}

# A TCP port nobody listens on, from $1 upwards.
free_port() {
    local p=$1
    while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
    echo "$p"
}

# init_cluster V DIR [preload]: a new cluster for PostgreSQL V in DIR, with
# vexec preloaded unless the third argument is "nopreload".
init_cluster() {
    local v=$1 dir=$2 preload=${3:-preload}
    rm -rf "$dir"
    "$(pg_bindir "$v")/initdb" -D "$dir" -U "$(id -un)" --auth=trust --encoding=UTF8 --locale=C.UTF-8 \
        >"$dir.initdb.log" 2>&1 || { cat "$dir.initdb.log" >&2; die "initdb failed"; }
    {
        echo "listen_addresses = 'localhost'"
        echo "unix_socket_directories = '$dir'"
        [ "$preload" = nopreload ] || echo "shared_preload_libraries = 'vexec'"
        echo "max_connections = 40"
        echo "shared_buffers = 256MB"
        echo "fsync = off"
        echo "logging_collector = off"
    } >>"$dir/postgresql.conf"
}

# start_cluster V DIR PORT
start_cluster() {
    local v=$1 dir=$2 port=$3
    "$(pg_bindir "$v")/pg_ctl" -D "$dir" -o "-p $port" -l "$dir/server.log" -w -t 60 start >/dev/null || {
        tail -n 20 "$dir/server.log" >&2
        die "PostgreSQL $v did not start (log: $dir/server.log)"
    }
}

stop_cluster() {
    local v=$1 dir=$2
    [ -f "$dir/postmaster.pid" ] || return 0
    "$(pg_bindir "$v")/pg_ctl" -D "$dir" -m fast -w -t 60 stop >/dev/null 2>&1 || true
}
