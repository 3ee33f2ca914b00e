#!/usr/bin/env bash
# usage (host): .pcmp.sh DB N "SQL": N alternating runs in postgres and arrow layouts (auto, 0 workers); min of each
DB=$1; N=$2; Q=$3
cd "$(dirname "$0")"
{ echo "SET max_parallel_workers_per_gather = 0; SET vexec.mode = auto; \\timing on"; for i in $(seq $N); do echo "SET vexec.batch_format = postgres;"; echo "$Q;"; echo "SET vexec.batch_format = arrow;"; echo "$Q;"; done; } > .pcmp.sql
tools/devroot run ./.pbench.sh psql -d $DB -f .pcmp.sql 2>&1 | grep "^Time: [0-9.]* ms" | awk '{print $2}' | awk 'NR>1 && NR%2==0' | awk '{ if (NR%2==1) {if (!p || $1<p) p=$1} else {if (!a || $1<a) a=$1} } END {printf "postgres %.1f  arrow %.1f  ratio %.3f\n", p, a, a/p}'
