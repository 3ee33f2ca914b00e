/*
 * vexec_shim.h
 *	  The C side of vexec's per-batch loops (see vexec_shim.c). The Rust
 *	  declarations in src/shim.rs must match these exactly.
 */
#ifndef VEXEC_SHIM_H
#define VEXEC_SHIM_H

#include "postgres.h"
#include "access/relscan.h"
#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"
#include "utils/sortsupport.h"

/* How a column stores its values (the physical types of vexec_core::batch) */
#define VX_KIND_U8		0	/* bool: a byte a value */
#define VX_KIND_I16		1	/* int2 */
#define VX_KIND_W4		2	/* 4-byte by-value: int4, date, float4 bits, oid */
#define VX_KIND_W8		3	/* 8-byte by-value: int8, timestamp, float8 bits */
#define VX_KIND_DATUM	4	/* by-reference: the Datum (pointer) */
#define VX_KIND_CHAR	5	/* "char": widened to int16 */

typedef struct VxColumn
{
	int32		attnum;			/* 1-based attribute number */
	int32		kind;			/* VX_KIND_* */
	void	   *values;			/* capacity values of the kind's width */
	uint8	   *validity;		/* capacity bits, 1 = not NULL */
} VxColumn;

/* An input column of the row-by-row evaluator, as Datums */
typedef struct VxInput
{
	int32		attnum;
	Datum	   *values;
	const uint8 *validity;
} VxInput;

/* A qual: evaluated by PostgreSQL (state) or a kernel's result per row */
typedef struct VxQualItem
{
	ExprState  *state;			/* NULL: use kernel_result */
	const uint8 *kernel_result; /* 1 = true (NULL and false are 0) */
} VxQualItem;

/* A target entry evaluated by PostgreSQL into values/isnull (state NULL:
 * computed by kernels, skipped here) */
typedef struct VxTargetItem
{
	ExprState  *state;
	Datum	   *values;
	bool	   *isnull;
	/*
	 * typlen of a by-reference result to copy into per-tuple memory, 0 for
	 * none: a SubPlan returns a pointer into its current tuple, which its next
	 * evaluation frees, and a batch keeps every row's result.
	 */
	int16		copy_typlen;
} VxTargetItem;

/*
 * The layout contract with vexec/src/shim.rs, which asserts the same numbers
 * at compile time (64-bit platforms): a struct changed on one side only
 * fails the build instead of misreading memory.
 */
StaticAssertDecl(sizeof(VxColumn) == 24 && offsetof(VxColumn, kind) == 4 &&
				 offsetof(VxColumn, values) == 8 && offsetof(VxColumn, validity) == 16,
				 "VxColumn layout differs from vexec/src/shim.rs");
StaticAssertDecl(sizeof(VxInput) == 24 && offsetof(VxInput, values) == 8 &&
				 offsetof(VxInput, validity) == 16,
				 "VxInput layout differs from vexec/src/shim.rs");
StaticAssertDecl(sizeof(VxQualItem) == 16 && offsetof(VxQualItem, kernel_result) == 8,
				 "VxQualItem layout differs from vexec/src/shim.rs");
StaticAssertDecl(sizeof(VxTargetItem) == 32 && offsetof(VxTargetItem, values) == 8 &&
				 offsetof(VxTargetItem, isnull) == 16 && offsetof(VxTargetItem, copy_typlen) == 24,
				 "VxTargetItem layout differs from vexec/src/shim.rs");
StaticAssertDecl(VX_KIND_U8 == 0 && VX_KIND_I16 == 1 && VX_KIND_W4 == 2 && VX_KIND_W8 == 3 &&
				 VX_KIND_DATUM == 4 && VX_KIND_CHAR == 5,
				 "VX_KIND_* differ from vexec/src/shim.rs");

typedef struct VxHeapReader VxHeapReader;

extern TableScanDesc vx_begin_scan(Relation rel, Snapshot snapshot);
extern TableScanDesc vx_begin_parallel_scan(Relation rel, ParallelTableScanDesc pscan);
extern bool vx_scan_is_pagemode(TableScanDesc scan);

extern VxHeapReader *vx_heap_begin(TableScanDesc scan, int nearly, VxColumn *early,
								   int nlate, VxColumn *late, int capacity,
								   bool keep_pins, int max_pins);
extern void vx_heap_deform_late(VxHeapReader *r, int nrows, const uint16 *rows);
extern void vx_heap_set_columns(VxHeapReader *r, int nearly, VxColumn *early, int nlate,
								VxColumn *late);
extern void vx_heap_set_tids(VxHeapReader *r, ItemPointerData *tids);
extern int	vx_heap_next(VxHeapReader *r, int capacity);
extern void vx_heap_release(VxHeapReader *r);
extern void vx_heap_restart(VxHeapReader *r);
extern void vx_heap_stats(VxHeapReader *r, uint64 *pages, uint64 *tuples);
extern uint64 vx_heap_direct_pins(VxHeapReader *r);

extern int	vx_slot_next(TableScanDesc scan, TupleTableSlot *slot, int ncols, VxColumn *cols,
						 ItemPointerData *tids, int capacity);

extern int	vx_eval_rows(ExprContext *econtext, TupleTableSlot *slot,
						 int ninputs, const VxInput *inputs, const ItemPointerData *tids,
						 int nrows, const uint16 *rows,
						 int nquals, const VxQualItem *quals,
						 int ntargets, const VxTargetItem *targets,
						 uint16 *passing);
extern Datum vx_eval_scalar(ExprState *state, ExprContext *econtext, bool *isnull);
extern bool vx_param_exec_ready(ExprContext *econtext, int paramid);
extern void vx_detoast(Datum *values, const uint8 *validity, int nrows, const uint16 *rows);
extern void vx_copy_datums(Datum *values, const uint8 *validity, int nrows, const uint16 *rows,
						   int16 typlen, bool detoast);
extern int	vx_topn_filter(int nkeys, SortSupport ssups, const Datum *const *cols, const bool *const *nulls,
						   const Datum *bvals, const bool *bnulls, int nrows, const uint16 *rows, uint16 *out);
extern void vx_prepare_sort_support(SortSupport ssup, Oid sortop, Oid collation, bool nulls_first);
/* Kernel packs (vexec_packs.c) */
#define VX_CALL_MAX_ARGS 8

typedef struct VxProcInfo
{
	const char *name;
	const char *args;			/* argument typnames, comma-separated */
	const char *prosrc;
	const char *probin;			/* NULL if none */
	bool		c_strict_scalar;	/* prolang C, STRICT, not a set */
	Oid			rettype;
} VxProcInfo;

StaticAssertDecl(sizeof(VxProcInfo) == 40 && offsetof(VxProcInfo, probin) == 24 &&
				 offsetof(VxProcInfo, c_strict_scalar) == 32 && offsetof(VxProcInfo, rettype) == 36,
				 "VxProcInfo layout is shared with shim.rs");

extern Oid	vx_extension_lookup(const char *name, char **version, TransactionId *xmin);
extern int	vx_extension_functions(Oid ext, Oid *out, int max);
extern bool vx_proc_info(Oid fn, VxProcInfo *info);
extern int	vx_call_rows(FmgrInfo *flinfo, Oid collation, int nargs, Datum *const *args,
						 int nrows, const uint16 *rows, Datum *out, bool *isnull,
						 MemoryContext per_row);

/* VecInsert (vexec_insert.c): rows written per table_multi_insert call */
#define VX_INSERT_GROUP 1000

typedef struct VxInsert VxInsert;

extern VxInsert *vx_insert_begin(EState *estate, Index rti, bool count, int ncols);
extern void vx_insert_rows(VxInsert *ins, int ncols, const VxColumn *cols, int nrows, const uint16 *rows);
extern void vx_insert_tuples(VxInsert *ins, int nrows, const char *block, const size_t *ends);
extern TupleDesc vx_insert_desc(VxInsert *ins);
extern int	vx_insert_from_child(VxInsert *ins, PlanState *child, int max);
extern void vx_insert_finish(VxInsert *ins);
extern void vx_insert_stats(VxInsert *ins, uint64 *rows, uint64 *groups);
extern bool vx_insert_reads_volatile(Node *node, Oid ingest_rows);

extern void vx_sort_ranks(Oid sortop, Oid collation, const Datum *values, const bool *isnull,
						  int n, uint32 *ranks);

#endif
