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
else
IN := tools/devroot run
SETUP := devroot
endif

.PHONY: test run stop psql sql devroot help

help:
	@echo "make test    everything CI runs (cargo tests, pgrx tests, pg_regress on 19 and 18)"
	@echo "make run     build, install and start a PostgreSQL 19 cluster with vexec preloaded"
	@echo "make stop    stop it;  make psql: psql on it"
	@echo "make sql FILE=x.sql PG=19|18   run a file on a fresh temporary cluster"

devroot:
	tools/devroot setup

test: $(SETUP)
	$(IN) tools/test

run: $(SETUP)
	$(IN) tools/pg run

stop:
	$(IN) tools/pg stop

psql:
	$(IN) tools/pg psql

sql: $(SETUP)
	@test -n "$(FILE)" || { echo "usage: make sql FILE=x.sql PG=19|18"; exit 2; }
	$(IN) tools/pg sql $(PG) - < "$(FILE)"
