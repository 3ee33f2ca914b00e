#!/usr/bin/env bash
# scratch: the bench cluster (TPC-H SF 1 etc.). usage: .pbench.sh start|stop|psql [args]
set -euo pipefail
. "$(dirname "$0")/tools/lib.sh"
D=$VEXEC_STATE/bench/pgdata
B=$(pg_bindir 19)
case $1 in
start) "$B/pg_ctl" -D "$D" -l "$D/scratch.log" -o "-p 5499 -c shared_preload_libraries=vexec -k $D" -w start ;;
stop) "$B/pg_ctl" -D "$D" -m fast -w stop ;;
psql) shift; "$B/psql" -X -h "$D" -p 5499 "$@" ;;
esac
