# vexec: the commands of README.md.
#
# By default everything runs inside the dev root made by tools/devroot (a
# Debian sid root with PostgreSQL 19 and 18 and pgrx, kept in
# $(VEXEC_CACHE), default /var/cache/vexec). On a machine that already has
# PostgreSQL 19 (pg_config --version says 19) and cargo-pgrx 0.19.4, run with
# NATIVE=1 to build and test against it directly instead.

SHELL := /bin/bash
PG ?= 19
export VEXEC_CACHE ?= /var/cache/vexec

NATIVE ?= $(shell pg_config --version 2>/dev/null | grep -q 'PostgreSQL 19' && command -v cargo-pgrx >/dev/null && echo 1)

ifeq ($(NATIVE),1)
IN :=
SETUP :=
STATE := $(HOME)/vexec-state
else
IN := tools/devroot run
SETUP := devroot
STATE := $(VEXEC_CACHE)/root/home/vexec/vexec-state
endif

# Benchmark results are named by the commit they measure.
export VEXEC_GIT_SHA := $(shell git rev-parse --short=12 HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
BENCH_ARGS ?=

.PHONY: test run stop psql sql devroot help bench bench-quick bench-scan bench-agg bench-egress bench-insert bench-flight bench-packs bench-compare check-full \
	citus citus-stop citus-psql check-citus citus-regress bench-citus

help:
	@echo "make test    everything CI runs (cargo tests, pgrx tests, pg_regress on 19 and 18)"
	@echo "make run     build, install and start a PostgreSQL 19 cluster with vexec preloaded"
	@echo "make stop    stop it;  make psql: psql on it"
	@echo "make sql FILE=x.sql PG=19|18   run a file on a fresh temporary cluster"
	@echo "make check-full   the correctness harness at full size"
	@echo "make bench-quick / make bench   benchmarks (1 M hits + TPC-H/TPC-DS SF 0.1 / 10 M + SF 1)"
	@echo "make bench-scan    the VecScan benchmark (10 M-row table)"
	@echo "make bench-agg     the VecAgg benchmark (10 M-row table, GROUP BY and count(DISTINCT))"
	@echo "make bench-egress  Arrow egress: lineitem SF 1 via vexec.arrow_ipc_stream (pyarrow) vs COPY binary (psycopg)"
	@echo "make bench-insert  INSERT ... SELECT of lineitem SF 1 (with and without its key) and hits 10 M, off vs force"
	@echo "make bench-flight  vexec_flight: Q1 through Flight vs pgwire, lineitem ingest vs ADBC COPY, a slow client"
	@echo "make bench-packs   kernel packs: pgvector kNN and distance filter (1 M x 128), PostGIS filters (1 M points) and a join, off/auto/force"
	@echo "make bench-compare A=x.csv B=y.csv   two result files side by side"
	@echo "make citus / citus-stop / citus-psql   a local Citus cluster (PostgreSQL 18) with TPC-H SF 0.1"
	@echo "make check-citus   TPC-H on the Citus cluster in every mode, against single-node and DuckDB"
	@echo "make citus-regress   Citus's own regression schedule without and with vexec"
	@echo "make bench-citus   distributed TPC-H SF 1: off vs auto on the cluster and on single-node 18"

devroot:
	tools/devroot setup

test: $(SETUP)
	$(IN) tools/test

run: $(SETUP)
	$(IN) tools/pg run

# Every leg of the correctness harness at full size (about an hour).
check-full: $(SETUP)
	$(IN) tools/check --full

bench-quick: $(SETUP)
	$(IN) tools/bench run --quick $(BENCH_ARGS)
	@$(MAKE) --no-print-directory bench-collect

bench: $(SETUP)
	$(IN) tools/bench run --pk $(BENCH_ARGS)
	@$(MAKE) --no-print-directory bench-collect

# The VecScan benchmark: 10 M rows, best of 5, off/auto/force (and force with
# VecScan only: forcescan), 0 and 2 workers.
bench-scan: $(SETUP)
	$(IN) tools/bench run --benchmarks scan --hot 5 --modes vanilla,off,auto,force,forcescan $(BENCH_ARGS)
	@$(MAKE) --no-print-directory bench-collect

# The VecAgg benchmark: 10 M rows, GROUP BY keys with 10, 10 K and 5 M
# values and count(DISTINCT), best of 5, off/auto/force, 0 and 2 workers.
bench-agg: $(SETUP)
	$(IN) tools/bench run --benchmarks agg --hot 5 --modes off,auto,force $(BENCH_ARGS)
	@$(MAKE) --no-print-directory bench-collect

# Arrow egress: TPC-H SF 1 lineitem into a client through
# vexec.arrow_ipc_stream (pyarrow) and through COPY binary (psycopg).
bench-egress: $(SETUP)
	$(IN) tools/bench egress $(BENCH_ARGS)
	@$(MAKE) --no-print-directory bench-collect

# VecInsert: INSERT ... SELECT of lineitem (SF 1, without and with its
# primary key) and hits (10 M rows) in modes off and force.
bench-insert: $(SETUP)
	$(IN) tools/bench insert $(BENCH_ARGS)
	@$(MAKE) --no-print-directory bench-collect

# vexec_flight: TPC-H Q1 through Flight against pgwire, ingest of lineitem
# SF 1 (adbc_ingest) against ADBC's PostgreSQL driver, a slow client's memory.
bench-flight: $(SETUP)
	$(IN) tools/bench flight $(BENCH_ARGS)
	@$(MAKE) --no-print-directory bench-collect

# The kernel packs: pgvector's exact kNN (<->, <=>) and a distance filter
# over 1 M 128-dimension vectors without an index; PostGIS's box and
# distance filters over 1 M points and a polygon-point join; off/auto/force.
bench-packs: $(SETUP)
	$(IN) tools/bench packs $(BENCH_ARGS)
	@$(MAKE) --no-print-directory bench-collect

# Results are written inside the dev root; keep them in the repository
# (a resumed run's file is newer than the copy of its first part). Runs of
# a dirty tree stay in the dev root: no git sha can reproduce them.
bench-collect:
	@mkdir -p bench/results bench/reports
	@for f in $(STATE)/bench/results/*.csv $(STATE)/bench/results/*.json $(STATE)/bench/reports/*; do \
	  case "$$f" in *-dirty-*|*'*'*) continue;; esac; \
	  case "$$f" in */results/*) d=bench/results;; *) d=bench/reports;; esac; \
	  cp -u "$$f" $$d/; \
	done
	@echo "results and reports of clean trees copied into bench/results and bench/reports"

bench-compare:
	@test -n "$(A)" -a -n "$(B)" || { echo "usage: make bench-compare A=bench/results/x.csv B=bench/results/y.csv"; exit 2; }
	$(IN) tools/bench compare $(A) $(B)

# vexec inside Citus (docs/citus.md): a coordinator and two workers on
# PostgreSQL 18, left running by `make citus` until `make citus-stop`.
citus: $(SETUP)
	$(IN) tools/citus start

citus-stop:
	$(IN) tools/citus stop

citus-psql:
	$(IN) tools/citus psql

check-citus: $(SETUP)
	$(IN) tools/check --legs citus $(CHECK_ARGS)

citus-regress: $(SETUP)
	$(IN) tools/citus regress $(SCHEDULE)

bench-citus: $(SETUP)
	$(IN) tools/bench run --benchmarks citus-tpch,tpch-pg18 --modes off,auto --workers 0 --sessions 2 $(BENCH_ARGS)
	@$(MAKE) --no-print-directory bench-collect

stop:
	$(IN) tools/pg stop

psql:
	$(IN) tools/pg psql

sql: $(SETUP)
	@test -n "$(FILE)" || { echo "usage: make sql FILE=x.sql PG=19|18"; exit 2; }
	$(IN) tools/pg sql $(PG) - < "$(FILE)"
