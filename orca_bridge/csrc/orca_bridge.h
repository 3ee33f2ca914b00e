/*
 * orca_bridge.h: the C API of the shim over ORCA (libgpos, libnaucrates,
 * libgpopt, libgpdbcost). bindgen turns this file into the crate's Rust
 * declarations; src/lib.rs is the safe API over them.
 *
 * Every function catches ORCA's exceptions (and any other C++ exception)
 * before returning: none crosses this boundary. Errors come back as a
 * non-zero return and a NUL-terminated message in the caller's buffer.
 *
 * Strings the shim returns are malloc'd; orca_result_free releases them.
 */
#ifndef ORCA_BRIDGE_H
#define ORCA_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which cost model prices the plans. */
typedef enum OrcaCostModelKind
{
	/* The cost model the minidump was captured with (ORCA's calibrated GPDB
	 * model, or its legacy model when the dump names none). */
	ORCA_COST_MINIDUMP = 0,
	/* ORCA's calibrated GPDB model, with the dump's parameters if it has
	 * them (ORCA's defaults otherwise). */
	ORCA_COST_GPDB = 1,
	/* CCostModelVec: the GPDB model (as ORCA_COST_GPDB) blended with
	 * vexec's vector factors. */
	ORCA_COST_VEC = 2,
} OrcaCostModelKind;

/*
 * vexec's vector factors: the cost of an operator's own work on batches as a
 * share of its row cost (1 = the same as ORCA's formula).
 */
typedef struct OrcaVecFactors
{
	double scan;		 /* table scans: visibility, deforming */
	double filter;		 /* quals and projections evaluated by kernels */
	double agg;			 /* hash and plain aggregation */
	double hash_join;	 /* hash join build and probe */
	double sort;		 /* sorting */
	double handoff;		 /* per row: a batch handed to a row operator */
} OrcaVecFactors;

typedef struct OrcaOptions
{
	OrcaCostModelKind cost_model;
	OrcaVecFactors vec;
	/* Function OIDs (pg_proc) vexec has kernels for: the oracle of which
	 * scalar work runs vectorized. Operators count by the function they
	 * call. */
	const uint32_t *kernel_oids;
	size_t n_kernel_oids;
	/* Branch-and-bound search (ORCA's space pruning) instead of exhaustive. */
	int space_pruning;
} OrcaOptions;

typedef struct OrcaResult
{
	/* The chosen plan, serialized as ORCA's test harness compares plans
	 * (indented, no document header, plan id and space size as 0). */
	char *plan_dxl;
	/* The minidump's expected plan, serialized the same way (NULL if none). */
	char *expected_dxl;
	/* ORCA's trace output: its optimization statistics, timers. */
	char *log;
	uint64_t plan_id;
	uint64_t plan_space_size;
	uint64_t expected_plan_id;
	uint64_t expected_plan_space_size;
	/* Wall time of the optimization itself (not of loading the file). */
	double optimize_ms;
} OrcaResult;

/* Flags that ask ORCA to stop (each may be NULL): ORCA polls them between
 * its optimization jobs and gives up with an error when one is non-zero.
 * A PostgreSQL backend passes QueryCancelPending and ProcDiePending. Call
 * before orca_init; later calls change the flags ORCA reads. */
void orca_set_abort_flags(const volatile int *cancel, const volatile int *die);

/* Initialize ORCA once per process (memory pools, workers, DXL, MD cache).
 * Idempotent; returns 0 on success. */
int orca_init(char *err, size_t errlen);

/* The ORCA version the shim was built against, e.g. "3.122.0". */
const char *orca_version(void);

/*
 * Load the minidump at `path` and optimize its query as ORCA's minidump
 * harness does (its trace flags, plan enumeration on, constant evaluation
 * off). On success fills *out (release with orca_result_free) and returns 0.
 */
int orca_optimize_minidump(const char *path, const OrcaOptions *opts,
						   OrcaResult *out, char *err, size_t errlen);

void orca_result_free(OrcaResult *r);

#ifdef __cplusplus
}
#endif

#endif /* ORCA_BRIDGE_H */
