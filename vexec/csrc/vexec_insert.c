/*-------------------------------------------------------------------------
 *
 * vexec_insert.c
 *	  VecInsert's per-row loop: rows into a table through the table access
 *	  method's multi_insert, in groups, as COPY FROM writes them.
 *
 * The node sits under PostgreSQL's own ModifyTable, which opens the result
 * relation, checks privileges, fires statement triggers and sets the
 * command tag from es_processed; the planner offers VecInsert only where no
 * row trigger, ON CONFLICT, RETURNING or WITH CHECK option needs a row at a
 * time (plan/insert.rs). What ExecInsert does per row is done here in its
 * order: stored generated columns, then constraints (NOT NULL, CHECK, the
 * partition constraint of a partition named directly); then, per group,
 * the heap tuples (table_multi_insert with a BulkInsertState, which keeps
 * the last page pinned and extends the table a group's pages at a time)
 * and each row's index entries in row order.
 *
 * Errors: a row that breaks a constraint is found by a check that does not
 * raise (vx_row_passes, which mirrors ExecConstraints and prepares the
 * same CHECK expressions ExecConstraints then uses); the rows before it are
 * written first, so a unique violation among them is reported as the row
 * executor would report it, and then ExecConstraints raises PostgreSQL's
 * own error for the row.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/hio.h"
#include "access/tableam.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_proc.h"
#include "executor/executor.h"
#include "executor/nodeModifyTable.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pg_list.h"
#include "rewrite/rewriteHandler.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "vexec_shim.h"

struct VxInsert
{
	EState	   *estate;
	ResultRelInfo *rri;
	Relation	rel;
	BulkInsertState bistate;
	/* VX_INSERT_GROUP slots of the table's type, made as needed */
	TupleTableSlot **slots;
	int			nmade;
	int			nused;
	bool		count;			/* the statement sets the command tag */
	bool		generated;		/* stored generated columns */
	bool		constraints;	/* the relation has constraints */
	bool		partition;		/* a partition named directly */
	List	   *virtual_notnull;	/* NOT NULL virtual generated columns */
	uint64		inserted;
	uint64		groups;
	bool		checked;		/* vx_insert_check ran */
};

/*
 * The planner refused these (plan/insert.rs), and a plan made before one
 * appeared is invalidated with the relation; a plan that still meets one is
 * a bug, never rows written past a trigger or a policy. Checked at the
 * first rows: ModifyTable sets up WITH CHECK options after its child.
 */
static void
vx_insert_check(VxInsert *ins)
{
	TriggerDesc *td = ins->rri->ri_TrigDesc;

	if ((td && (td->trig_insert_before_row || td->trig_insert_after_row ||
				td->trig_insert_instead_row || td->trig_insert_new_table)) ||
		ins->rri->ri_WithCheckOptions != NIL || ins->rri->ri_FdwRoutine != NULL)
		elog(ERROR, "vexec internal error: VecInsert planned for \"%s\", which needs rows one at a time",
			 RelationGetRelationName(ins->rel));
	ins->checked = true;
}

VxInsert *
vx_insert_begin(EState *estate, Index rti, bool count, int ncols)
{
	MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);
	VxInsert   *ins = palloc0(sizeof(VxInsert));
	TupleDesc	desc;

	if (estate->es_result_relations == NULL || estate->es_result_relations[rti - 1] == NULL)
		elog(ERROR, "vexec internal error: VecInsert's result relation %u is not open", rti);
	ins->estate = estate;
	ins->rri = estate->es_result_relations[rti - 1];
	ins->rel = ins->rri->ri_RelationDesc;
	desc = RelationGetDescr(ins->rel);
	/* the child's row is the new row, column for column (plan/insert.rs) */
	if (ncols != desc->natts)
		elog(ERROR, "vexec internal error: VecInsert's input has %d columns for %d", ncols, desc->natts);
	ins->count = count;
	ins->constraints = desc->constr != NULL;
	ins->generated = desc->constr && desc->constr->has_generated_stored;
	ins->partition = ins->rel->rd_rel->relispartition && ins->rri->ri_RootResultRelInfo == NULL;
	if (desc->constr && desc->constr->has_not_null)
	{
		for (AttrNumber a = 1; a <= desc->natts; a++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, a - 1);

			if (att->attnotnull && att->attgenerated == ATTRIBUTE_GENERATED_VIRTUAL)
				ins->virtual_notnull = lappend_int(ins->virtual_notnull, a);
		}
	}
	/* As ExecInsert: index entries need the indexes open. */
	if (ins->rel->rd_rel->relhasindex && ins->rri->ri_IndexRelationDescs == NULL)
		ExecOpenIndices(ins->rri, false);
	ins->slots = palloc0(sizeof(TupleTableSlot *) * VX_INSERT_GROUP);
	ins->bistate = GetBulkInsertState();

	/*
	 * Without its ring of buffers: rows go through shared buffers as
	 * ModifyTable's do, so the cache and the buffer counters are row mode's.
	 * With the ring (COPY's choice) the backend itself writes out the ring's
	 * dirty pages, flushing WAL first, which made a 10 M-row hits insert 30 %
	 * slower on the benchmark machine (docs/benchmarks.md).
	 *
	 * But with the ring where the table's pages skip WAL (a table created
	 * or truncated by this transaction under wal_level = minimal): its
	 * commit writes out every one of the table's buffers anyway
	 * (smgrDoPendingSyncs), so the ring adds no write and no WAL flush, and
	 * the new table does not take over shared buffers (nor, on a new
	 * server, fault in never-used ones) only to be written at commit.
	 */
	if (RelationNeedsWAL(ins->rel) || ins->rel->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT)
	{
		FreeAccessStrategy(ins->bistate->strategy);
		ins->bistate->strategy = NULL;
	}
	MemoryContextSwitchTo(old);
	return ins;
}

/*
 * The CHECK constraints' expressions, prepared as ExecRelCheck prepares
 * them (and kept where it looks for them, so ExecConstraints uses these).
 */
static void
vx_prepare_checks(VxInsert *ins)
{
	TupleConstr *constr = RelationGetDescr(ins->rel)->constr;
	MemoryContext old;

	if (ins->rri->ri_CheckConstraintExprs != NULL)
		return;
	old = MemoryContextSwitchTo(ins->estate->es_query_cxt);
	ins->rri->ri_CheckConstraintExprs = palloc0_array(ExprState *, constr->num_check);
	for (int i = 0; i < constr->num_check; i++)
	{
		Expr	   *e;

		if (!constr->check[i].ccenforced)
			continue;
		e = stringToNode(constr->check[i].ccbin);
		e = (Expr *) expand_generated_columns_in_expr((Node *) e, ins->rel, 1);
		ins->rri->ri_CheckConstraintExprs[i] = ExecPrepareExpr(e, ins->estate);
	}
	MemoryContextSwitchTo(old);
}

/*
 * Whether the row in `slot` passes what ExecConstraints checks (and, for a
 * partition named directly, its partition constraint), without raising.
 */
static bool
vx_row_passes(VxInsert *ins, TupleTableSlot *slot)
{
	TupleDesc	desc = RelationGetDescr(ins->rel);
	TupleConstr *constr = desc->constr;

	if (constr)
	{
		if (constr->has_not_null)
		{
			for (AttrNumber a = 1; a <= desc->natts; a++)
			{
				Form_pg_attribute att = TupleDescAttr(desc, a - 1);

				if (att->attnotnull && att->attgenerated != ATTRIBUTE_GENERATED_VIRTUAL &&
					slot_attisnull(slot, a))
					return false;
			}
		}
		if (ins->virtual_notnull != NIL &&
			ExecRelGenVirtualNotNull(ins->rri, slot, ins->estate, ins->virtual_notnull) != InvalidAttrNumber)
			return false;
		if (ins->rel->rd_rel->relchecks > 0)
		{
			ExprContext *econtext;

			/* ExecRelCheck's own complaint, raised by ExecConstraints */
			if (constr->num_check != ins->rel->rd_rel->relchecks)
				return false;
			vx_prepare_checks(ins);
			econtext = GetPerTupleExprContext(ins->estate);
			econtext->ecxt_scantuple = slot;
			for (int i = 0; i < constr->num_check; i++)
			{
				ExprState  *state = ins->rri->ri_CheckConstraintExprs[i];

				if (state && !ExecCheck(state, econtext))
					return false;
			}
		}
	}
	if (ins->partition && !ExecPartitionCheck(ins->rri, slot, ins->estate, false))
		return false;
	return true;
}

/* Write the group's rows: heap tuples in one call, then index entries. */
static void
vx_insert_flush(VxInsert *ins)
{
	EState	   *estate = ins->estate;
	MemoryContext old;

	if (ins->nused == 0)
		return;
	/*
	 * The bulk state extends the table by as many pages as it has extended
	 * it by so far (up to 64 at a time); counted from zero for each group,
	 * an extension is what the group needs, so the table does not end with
	 * pages row by row would not have made (a small table would also be
	 * estimated bigger by the planner until VACUUM).
	 */
	ins->bistate->already_extended_by = 0;
	/* table_multi_insert may leak into the current context (as COPY notes) */
	old = MemoryContextSwitchTo(GetPerTupleMemoryContext(estate));
	table_multi_insert(ins->rel, ins->slots, ins->nused, estate->es_output_cid, 0, ins->bistate);
	MemoryContextSwitchTo(old);
	for (int i = 0; i < ins->nused; i++)
	{
		if (ins->rri->ri_NumIndices > 0)
		{
			List	   *recheck;

#if PG_VERSION_NUM >= 190000
			recheck = ExecInsertIndexTuples(ins->rri, estate, 0, ins->slots[i], NIL, NULL);
#else
			recheck = ExecInsertIndexTuples(ins->rri, ins->slots[i], estate, false, false, NULL, NIL, false);
#endif
			/* deferred constraints are checked by row triggers, which the planner refused */
			if (recheck != NIL)
				elog(ERROR, "vexec internal error: VecInsert got index entries to recheck");
		}
		ExecClearTuple(ins->slots[i]);
		ResetPerTupleExprContext(estate);
	}
	if (ins->count)
		estate->es_processed += ins->nused;
	ins->inserted += ins->nused;
	ins->groups++;
	ins->nused = 0;
}

/* The next free slot of the group, after writing a full group. */
static TupleTableSlot *
vx_insert_next_slot(VxInsert *ins)
{
	TupleTableSlot *slot;

	if (ins->nused == VX_INSERT_GROUP)
		vx_insert_flush(ins);
	if (ins->nused == ins->nmade)
		ins->slots[ins->nmade++] = table_slot_create(ins->rel, &ins->estate->es_tupleTable);
	slot = ins->slots[ins->nused];
	ExecClearTuple(slot);
	return slot;
}

/*
 * The slot holds the next row (its own copy): what ExecInsert does before
 * writing, then the row joins the group.
 */
static void
vx_insert_slot_ready(VxInsert *ins, TupleTableSlot *slot)
{
	EState	   *estate = ins->estate;

	slot->tts_tableOid = RelationGetRelid(ins->rel);
	ResetPerTupleExprContext(estate);
	if (ins->generated)
		ExecComputeStoredGenerated(ins->rri, estate, slot, CMD_INSERT);
	if ((ins->constraints || ins->partition) && !vx_row_passes(ins, slot))
	{
		/*
		 * The rows before it first (the group is slots[0..nused), this
		 * row is the slot after), then PostgreSQL's error for this one.
		 */
		vx_insert_flush(ins);
		if (ins->constraints)
			ExecConstraints(ins->rri, slot, estate);
		if (ins->partition)
			ExecPartitionCheck(ins->rri, slot, estate, true);
		elog(ERROR, "vexec internal error: a row VecInsert found to break a constraint passed");
	}
	ins->nused++;
}

/* Row `r` of a batch column, as a Datum (the inverse of vx_store). */
static inline Datum
vx_load(const VxColumn *col, int r)
{
	switch (col->kind)
	{
		case VX_KIND_U8:
			return BoolGetDatum(((const uint8 *) col->values)[r] != 0);
		case VX_KIND_I16:
		case VX_KIND_CHAR:
			return Int16GetDatum(((const int16 *) col->values)[r]);
		case VX_KIND_W4:
			return Int32GetDatum(((const int32 *) col->values)[r]);
		case VX_KIND_W8:
			return Int64GetDatum(((const int64 *) col->values)[r]);
		default:
			return ((const Datum *) col->values)[r];
	}
}

void
vx_insert_rows(VxInsert *ins, int ncols, const VxColumn *cols, int nrows, const uint16 *rows)
{
	if (!ins->checked)
		vx_insert_check(ins);
	for (int r = 0; r < nrows; r++)
	{
		TupleTableSlot *slot = vx_insert_next_slot(ins);

		for (int c = 0; c < ncols; c++)
		{
			int			a = cols[c].attnum - 1;
			int			i = rows[r];

			slot->tts_isnull[a] = !(cols[c].validity[i >> 3] & (1 << (i & 7)));
			slot->tts_values[a] = slot->tts_isnull[a] ? (Datum) 0 : vx_load(&cols[c], i);
		}
		ExecStoreVirtualTuple(slot);
		/* the values live in the caller's batch: the slot takes its own copy */
		ExecMaterializeSlot(slot);
		vx_insert_slot_ready(ins, slot);
	}
}

/*
 * Rows already formed as heap tuples (vexec_core's heap_rows, which lays
 * them out as heap_form_tuple lays out the same values): tuple r is
 * block[ends[r - 1], ends[r]) (from 0 for the first), each copied into the
 * next slot's memory and stored there as the slot's own tuple, as
 * ExecForceStoreHeapTuple stores one (without its second copy).
 */
void
vx_insert_tuples(VxInsert *ins, int nrows, const char *block, const size_t *ends)
{
	size_t		start = 0;

	if (!ins->checked)
		vx_insert_check(ins);
	for (int r = 0; r < nrows; r++)
	{
		TupleTableSlot *slot = vx_insert_next_slot(ins);
		size_t		len = ends[r] - start;
		HeapTuple	tuple;

		if (!TTS_IS_BUFFERTUPLE(slot))
			elog(ERROR, "vexec internal error: VecInsert's slots are not heap slots");
		tuple = MemoryContextAlloc(slot->tts_mcxt, HEAPTUPLESIZE + len);
		tuple->t_len = len;
		ItemPointerSetInvalid(&tuple->t_self);
		tuple->t_tableOid = InvalidOid;
		tuple->t_data = (HeapTupleHeader) ((char *) tuple + HEAPTUPLESIZE);
		memcpy(tuple->t_data, block + start, len);
		slot->tts_flags &= ~TTS_FLAG_EMPTY;
		((BufferHeapTupleTableSlot *) slot)->base.tuple = tuple;
		slot->tts_flags |= TTS_FLAG_SHOULDFREE;
		vx_insert_slot_ready(ins, slot);
		start = ends[r];
	}
}

/* The table's descriptor (heap_rows' attributes are read from it). */
TupleDesc
vx_insert_desc(VxInsert *ins)
{
	return RelationGetDescr(ins->rel);
}

/*
 * Rows from a row child (any plan that is not a vexec batch source), up to
 * `max` of them: each copied into a slot of the table's type as it comes
 * (a heap tuple the child returns unprojected, as a Seq Scan of a table of
 * the same columns does, is copied whole, never taken apart). Returns the
 * rows read; fewer than `max` at the child's end.
 */
int
vx_insert_from_child(VxInsert *ins, PlanState *child, int max)
{
	int			n = 0;

	if (!ins->checked)
		vx_insert_check(ins);
	while (n < max)
	{
		TupleTableSlot *in = ExecProcNode(child);
		TupleTableSlot *slot;

		if (TupIsNull(in))
			break;
		slot = vx_insert_next_slot(ins);
		if (TTS_IS_BUFFERTUPLE(in) || TTS_IS_HEAPTUPLE(in))
		{
			/*
			 * A heap tuple, copied once into the slot's memory
			 * (ExecCopySlot would have the slot share the page, pinning
			 * it once per row).
			 */
			ExecForceStoreHeapTuple(ExecFetchSlotHeapTuple(in, false, NULL), slot, false);
		}
		else
			ExecCopySlot(slot, in);
		vx_insert_slot_ready(ins, slot);
		n++;
	}
	return n;
}

void
vx_insert_finish(VxInsert *ins)
{
	vx_insert_flush(ins);
	if (ins->bistate)
	{
		BlockNumber next = ins->bistate->next_free;
		BlockNumber last = ins->bistate->last_free;

		/*
		 * Pages the bulk state extended the table by and did not fill are
		 * known to it alone: enter them in the free space map, so later
		 * inserts use them (VACUUM would find them; COPY leaves them).
		 */
		if (BlockNumberIsValid(next) && BlockNumberIsValid(last) && next <= last)
		{
			for (BlockNumber b = next; b <= last; b++)
				RecordPageWithFreeSpace(ins->rel, b, BLCKSZ - SizeOfPageHeaderData);
			FreeSpaceMapVacuumRange(ins->rel, next, last + 1);
		}
		FreeBulkInsertState(ins->bistate);
		ins->bistate = NULL;
		table_finish_bulk_insert(ins->rel, 0);
	}
}

void
vx_insert_stats(VxInsert *ins, uint64 *rows, uint64 *groups)
{
	*rows = ins->inserted;
	*groups = ins->groups;
}

/*
 * Whether a query calls a volatile function other than nextval that could
 * read the table while VecInsert writes it: contain_volatile_functions_not_nextval
 * (clauses.c), walked the same way, except that `ingest_rows` (the OID of
 * vexec.ingest_rows(bigint), or InvalidOid) is not counted. That function
 * reads the Arrow batches vexec's ingest registered in this backend, never
 * a table; it is volatile because each call takes its batches.
 */
static bool
vx_volatile_checker(Oid func_id, void *context)
{
	return func_id != F_NEXTVAL && func_id != *(Oid *) context &&
		func_volatile(func_id) == PROVOLATILE_VOLATILE;
}

static bool
vx_volatile_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (check_functions_in_node(node, vx_volatile_checker, context))
		return true;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, vx_volatile_walker, context, 0);
	return expression_tree_walker(node, vx_volatile_walker, context);
}

bool
vx_insert_reads_volatile(Node *node, Oid ingest_rows)
{
	return vx_volatile_walker(node, &ingest_rows);
}
