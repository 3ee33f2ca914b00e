/*-------------------------------------------------------------------------
 *
 * vexec_shim.c
 *	  The per-row loops of vexec that call into PostgreSQL.
 *
 * Rust calls each function here once per batch, inside one guarded call
 * (pgrx's pg_guard_ffi_boundary), so a PostgreSQL ERROR raised by a row
 * longjmps out of plain C and becomes a Rust panic that unwinds cleanly to
 * the nearest #[pg_guard] entry point. That keeps guarded FFI calls out of
 * the hot loops, and lets the loops use PostgreSQL's macros and inline
 * functions (tuple deforming, ExecQual) exactly as the row executor does.
 *
 * Here: starting scans, the slot reader for table access methods other than
 * heap, and row-by-row evaluation; the heap page reader is in vexec_heap.c.
 * The loops:
 *   - the slot reader for other table access methods;
 *   - row-by-row evaluation with PostgreSQL's evaluator (the fallback steps
 *     and the exact re-evaluation of a batch whose kernels hit an error).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/syncscan.h"
#include "access/tableam.h"
#include "access/tupmacs.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/read_stream.h"
#include "utils/datum.h"
#include "utils/rel.h"
#include "utils/sortsupport.h"
#include "utils/spccache.h"

#include "vexec_column.h"
#include "vexec_shim.h"

/* ------------------------------------------------------------------------
 * Starting scans (their signatures differ between PostgreSQL versions)
 * ------------------------------------------------------------------------
 */
TableScanDesc
vx_begin_scan(Relation rel, Snapshot snapshot)
{
#if PG_VERSION_NUM >= 190000
	return table_beginscan(rel, snapshot, 0, NULL, SO_NONE);
#else
	return table_beginscan(rel, snapshot, 0, NULL);
#endif
}

TableScanDesc
vx_begin_parallel_scan(Relation rel, ParallelTableScanDesc pscan)
{
#if PG_VERSION_NUM >= 190000
	return table_beginscan_parallel(rel, pscan, SO_NONE);
#else
	return table_beginscan_parallel(rel, pscan);
#endif
}

/* Whether heap's page-at-a-time mode is on (it is off for non-MVCC
 * snapshots; the page reader needs it). */
bool
vx_scan_is_pagemode(TableScanDesc scan)
{
	return (scan->rs_flags & SO_ALLOW_PAGEMODE) != 0;
}

/* ------------------------------------------------------------------------
 * Slot reader (table access methods other than heap)
 * ------------------------------------------------------------------------
 */
int
vx_slot_next(TableScanDesc scan, TupleTableSlot *slot, int ncols, VxColumn *cols,
			 ItemPointerData *tids, int capacity)
{
	int			n = 0;
	int			max_attnum = ncols > 0 ? cols[ncols - 1].attnum : 0;

	vx_reset_validity(cols, ncols, capacity);
	CHECK_FOR_INTERRUPTS();
	while (n < capacity && table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		slot_getsomeattrs(slot, max_attnum);
		for (int c = 0; c < ncols; c++)
		{
			int			a = cols[c].attnum - 1;

			if (slot->tts_isnull[a])
				vx_set_null(&cols[c], n);
			else if (cols[c].kind == VX_KIND_DATUM)
			{
				/* the slot's next tuple invalidates it: copy into the batch's memory */
				CompactAttribute *att = TupleDescCompactAttr(slot->tts_tupleDescriptor, a);

				vx_store(&cols[c], n, datumCopy(slot->tts_values[a], att->attbyval, att->attlen));
			}
			else
				vx_store(&cols[c], n, slot->tts_values[a]);
		}
		if (tids)
			tids[n] = slot->tts_tid;
		n++;
	}
	return n;
}

/* ------------------------------------------------------------------------
 * Row-by-row evaluation with PostgreSQL's evaluator
 * ------------------------------------------------------------------------
 */

/* Put row `row` of the inputs into the (virtual) scan slot. */
static inline void
vx_fill_slot(TupleTableSlot *slot, int ninputs, const VxInput *inputs,
			 const ItemPointerData *tids, int row)
{
	for (int i = 0; i < ninputs; i++)
	{
		int			a = inputs[i].attnum - 1;

		slot->tts_values[a] = inputs[i].values[row];
		slot->tts_isnull[a] = !(inputs[i].validity[row >> 3] & (1 << (row & 7)));
	}
	if (tids)
		slot->tts_tid = tids[row];
}

/*
 * For each row of `rows`, in order: evaluate the qual items in order (a
 * kernel item's result is looked up, a fallback item is evaluated by
 * PostgreSQL) and stop at the first false or NULL; if the row passes,
 * evaluate the fallback target items in order. This is the order in which
 * the row executor evaluates a scan's quals and projection, so errors and
 * volatile functions happen exactly as there. Returns the passing rows.
 */
int
vx_eval_rows(ExprContext *econtext, TupleTableSlot *slot,
			 int ninputs, const VxInput *inputs, const ItemPointerData *tids,
			 int nrows, const uint16 *rows,
			 int nquals, const VxQualItem *quals,
			 int ntargets, const VxTargetItem *targets,
			 uint16 *passing)
{
	int			npass = 0;
	TupleDesc	desc = slot->tts_tupleDescriptor;

	/* a virtual tuple whose attributes the fallback reads are set per row */
	ExecClearTuple(slot);
	for (int a = 0; a < desc->natts; a++)
	{
		slot->tts_values[a] = (Datum) 0;
		slot->tts_isnull[a] = true;
	}
	slot->tts_flags &= ~TTS_FLAG_EMPTY;
	slot->tts_nvalid = desc->natts;
	econtext->ecxt_scantuple = slot;

	for (int i = 0; i < nrows; i++)
	{
		int			row = rows[i];
		bool		pass = true;

		vx_fill_slot(slot, ninputs, inputs, tids, row);
		for (int q = 0; q < nquals && pass; q++)
		{
			if (quals[q].state == NULL)
				pass = quals[q].kernel_result[row] != 0;
			else
				pass = ExecQual(quals[q].state, econtext);
		}
		if (!pass)
			continue;
		for (int t = 0; t < ntargets; t++)
		{
			Datum		d;

			if (targets[t].state == NULL)
				continue;
			d = ExecEvalExprSwitchContext(targets[t].state, econtext, &targets[t].isnull[row]);
			if (!targets[t].isnull[row] && targets[t].copy_typlen != 0)
			{
				MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);

				d = datumCopy(d, false, targets[t].copy_typlen);
				MemoryContextSwitchTo(old);
			}

			/*
			 * ctid is returned as a pointer to the slot's tts_tid, which the
			 * next row overwrites: keep a copy that lives with the batch.
			 */
			if (!targets[t].isnull[row] && DatumGetPointer(d) == (Pointer) &slot->tts_tid)
			{
				ItemPointer copy = MemoryContextAlloc(econtext->ecxt_per_tuple_memory,
													  sizeof(ItemPointerData));

				*copy = slot->tts_tid;
				d = PointerGetDatum(copy);
			}
			targets[t].values[row] = d;
		}
		passing[npass++] = (uint16) row;
	}
	return npass;
}

/* One scalar (a parameter) for the whole batch. */
Datum
vx_eval_scalar(ExprState *state, ExprContext *econtext, bool *isnull)
{
	return ExecEvalExprSwitchContext(state, econtext, isnull);
}

/* Whether PARAM_EXEC `paramid` is computed already (an InitPlan not yet run
 * must run when PostgreSQL would run it, not earlier). */
bool
vx_param_exec_ready(ExprContext *econtext, int paramid)
{
	ParamExecData *prm = &econtext->ecxt_param_exec_vals[paramid];

	return prm->execPlan == NULL;
}

/* Make the values of `rows` plain (inline, uncompressed), in the current
 * memory context. */
void
vx_detoast(Datum *values, const uint8 *validity, int nrows, const uint16 *rows)
{
	for (int i = 0; i < nrows; i++)
	{
		int			row = rows[i];

		if (!(validity[row >> 3] & (1 << (row & 7))))
			continue;
		/* external (a TOAST pointer; its 1-byte header is not a short
		 * header) or compressed inline */
		if (VARATT_IS_EXTERNAL(DatumGetPointer(values[row])) ||
			VARATT_IS_COMPRESSED(DatumGetPointer(values[row])))
			values[row] = PointerGetDatum(pg_detoast_datum_packed((struct varlena *) DatumGetPointer(values[row])));
	}
}

/* Replace the values of `rows` by copies in the current memory context
 * (datumCopy: a varlena keeps its TOAST pointer or compression, an expanded
 * object is flattened). With `detoast`, varlenas are made plain first, so
 * their bytes can be compared. */
void
vx_copy_datums(Datum *values, const uint8 *validity, int nrows, const uint16 *rows,
			   int16 typlen, bool detoast)
{
	for (int i = 0; i < nrows; i++)
	{
		int			row = rows[i];
		Datum		d = values[row];

		if (!(validity[row >> 3] & (1 << (row & 7))))
			continue;
		if (detoast && typlen == -1 &&
			(VARATT_IS_EXTERNAL(DatumGetPointer(d)) || VARATT_IS_COMPRESSED(DatumGetPointer(d))))
		{
			/* detoasting makes a fresh copy already */
			values[row] = PointerGetDatum(pg_detoast_datum_packed((struct varlena *) DatumGetPointer(d)));
			continue;
		}
		values[row] = datumCopy(d, false, typlen);
	}
}

typedef struct VxRankSort
{
	const Datum *values;
	SortSupport ssup;
} VxRankSort;

static int
vx_rank_cmp(const void *a, const void *b, void *arg)
{
	VxRankSort *rs = (VxRankSort *) arg;
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;
	int			c = ApplySortComparator(rs->values[x], false, rs->values[y], false, rs->ssup);

	if (c != 0)
		return c;
	return (x > y) - (x < y);
}

/* Rank the non-NULL values of one sort key by the ordering operator
 * `sortop` under `collation` (its SortSupport comparator, as tuplesort
 * compares): equal values get the same rank, ranks ascend in the
 * operator's order. NULL rows get rank 0 (the caller orders NULLs).
 * Comparators may allocate: the caller runs this in a short-lived context. */
void
vx_sort_ranks(Oid sortop, Oid collation, const Datum *values, const bool *isnull,
			  int n, uint32 *ranks)
{
	SortSupportData ssup;
	VxRankSort	rs;
	uint32	   *idx = palloc(sizeof(uint32) * Max(n, 1));
	int			m = 0;
	uint32		rank = 0;

	memset(&ssup, 0, sizeof(ssup));
	ssup.ssup_cxt = CurrentMemoryContext;
	ssup.ssup_collation = collation;
	ssup.ssup_nulls_first = false;
	ssup.abbreviate = false;
	PrepareSortSupportFromOrderingOp(sortop, &ssup);

	for (int i = 0; i < n; i++)
	{
		ranks[i] = 0;
		if (!isnull[i])
			idx[m++] = (uint32) i;
	}
	rs.values = values;
	rs.ssup = &ssup;
	qsort_arg(idx, m, sizeof(uint32), vx_rank_cmp, &rs);
	for (int i = 0; i < m; i++)
	{
		if (i > 0 && ApplySortComparator(values[idx[i - 1]], false, values[idx[i]], false, &ssup) != 0)
			rank++;
		ranks[idx[i]] = rank;
		if ((i & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(idx);
}

/* Top-N: keep the rows of a batch that sort no later than the boundary row
 * (the last row a top-N sort keeps so far); later rows can never enter its
 * result. Ties are kept (WITH TIES needs them). Every key compares through
 * its SortSupport, NULLs placed as the key says. Returns the rows kept. */
int
vx_topn_filter(int nkeys, SortSupport ssups, const Datum *const *cols, const bool *const *nulls,
			   const Datum *bvals, const bool *bnulls, int nrows, const uint16 *rows, uint16 *out)
{
	int			n = 0;

	for (int i = 0; i < nrows; i++)
	{
		int			r = rows[i];
		int			c = 0;

		for (int k = 0; k < nkeys && c == 0; k++)
			c = ApplySortComparator(cols[k][r], nulls[k][r], bvals[k], bnulls[k], &ssups[k]);
		if (c <= 0)
			out[n++] = (uint16) r;
	}
	return n;
}

/* SortSupport for one key, allocated in the current memory context. */
void
vx_prepare_sort_support(SortSupport ssup, Oid sortop, Oid collation, bool nulls_first)
{
	memset(ssup, 0, sizeof(SortSupportData));
	ssup->ssup_cxt = CurrentMemoryContext;
	ssup->ssup_collation = collation;
	ssup->ssup_nulls_first = nulls_first;
	ssup->abbreviate = false;
	PrepareSortSupportFromOrderingOp(sortop, ssup);
}
