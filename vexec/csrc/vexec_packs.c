/*-------------------------------------------------------------------------
 *
 * vexec_packs.c
 *	  Kernel packs' PostgreSQL side: catalog lookups that bind a pack's
 *	  declarations to an extension's functions, and the batch call loop.
 *
 * vx_call_rows calls a bound function through fmgr for a batch's rows. An
 * error it raises is caught and reported as the failing row instead: the
 * caller then evaluates the batch row by row with PostgreSQL's evaluator,
 * which raises the error again at the row PostgreSQL's own order reaches
 * first. Packs declare only functions that hold no resource when they raise
 * (vexec_core::packs), so discarding such an error leaves nothing behind.
 * Errors that are not about the arguments (a cancel, out of memory; see
 * deferrable) are rethrown at once.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "vexec_shim.h"

/* The extension named `name`: its OID (InvalidOid if not installed), with its
 * version (palloc'd) and the xmin of its catalog row (changes with ALTER
 * EXTENSION). */
Oid
vx_extension_lookup(const char *name, char **version, TransactionId *xmin)
{
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	Oid			oid = InvalidOid;

	*version = NULL;
	*xmin = InvalidTransactionId;
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum(name));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	if (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		isnull;
		Datum		v = heap_getattr(tup, Anum_pg_extension_extversion, RelationGetDescr(rel), &isnull);

		oid = ((Form_pg_extension) GETSTRUCT(tup))->oid;
		*version = isnull ? pstrdup("") : text_to_cstring(DatumGetTextPP(v));
		*xmin = HeapTupleHeaderGetXmin(tup->t_data);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return oid;
}

/* Up to `max` functions that are members of extension `ext` into `out`; the
 * number of members (may exceed max: call again with more room). */
int
vx_extension_functions(Oid ext, Oid *out, int max)
{
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key[2];
	HeapTuple	tup;
	int			n = 0;

	rel = table_open(DependRelationId, AccessShareLock);
	ScanKeyInit(&key[0], Anum_pg_depend_refclassid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(ExtensionRelationId));
	ScanKeyInit(&key[1], Anum_pg_depend_refobjid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(ext));
	scan = systable_beginscan(rel, DependReferenceIndexId, true, NULL, 2, key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_depend d = (Form_pg_depend) GETSTRUCT(tup);

		if (d->deptype != DEPENDENCY_EXTENSION || d->classid != ProcedureRelationId)
			continue;
		if (n < max)
			out[n] = d->objid;
		n++;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return n;
}

/* pg_type.typname of `type` (palloc'd), "?" if it is gone. */
static char *
typname_of(Oid type)
{
	HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(type));
	char	   *name;

	if (!HeapTupleIsValid(tup))
		return pstrdup("?");
	name = pstrdup(NameStr(((Form_pg_type) GETSTRUCT(tup))->typname));
	ReleaseSysCache(tup);
	return name;
}

/* What binding needs of function `fn` (strings palloc'd); false if it is
 * gone. */
bool
vx_proc_info(Oid fn, VxProcInfo *info)
{
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn));
	Form_pg_proc p;
	StringInfoData args;
	bool		isnull;
	Datum		d;

	if (!HeapTupleIsValid(tup))
		return false;
	p = (Form_pg_proc) GETSTRUCT(tup);
	info->name = pstrdup(NameStr(p->proname));
	initStringInfo(&args);
	for (int i = 0; i < p->pronargs; i++)
	{
		appendStringInfo(&args, "%s%s", i > 0 ? "," : "", typname_of(p->proargtypes.values[i]));
	}
	info->args = args.data;
	d = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);
	info->prosrc = isnull ? pstrdup("") : TextDatumGetCString(d);
	d = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_probin, &isnull);
	info->probin = isnull ? NULL : TextDatumGetCString(d);
	info->c_strict_scalar = p->prolang == ClanguageId && p->proisstrict && !p->proretset;
	info->rettype = p->prorettype;
	ReleaseSysCache(tup);
	return true;
}

/* Whether an error of this SQLSTATE may be discarded and left to the row
 * executor to raise again: everything a function computing on its arguments
 * raises (data exceptions, program limits, and the internal errors some
 * extensions raise for bad input: PostGIS's elog(ERROR) is XX000). Never a
 * cancel or shutdown (class 57: discarding it would lose the interrupt),
 * resource exhaustion (53), system errors (58), connection errors (08),
 * transaction rollbacks (40), lock failures (55) or corruption (XX001,
 * XX002). */
static bool
deferrable(int sqlerrcode)
{
	static const char *const never[] = {"57", "53", "58", "08", "40", "55"};
	char		class[3] = {PGUNSIXBIT(sqlerrcode), PGUNSIXBIT(sqlerrcode >> 6), 0};

	for (int i = 0; i < lengthof(never); i++)
		if (strcmp(class, never[i]) == 0)
			return false;
	return sqlerrcode != ERRCODE_DATA_CORRUPTED && sqlerrcode != ERRCODE_INDEX_CORRUPTED;
}

/* Call `flinfo` for `rows` (args[a][row], none NULL): out[row], isnull[row].
 * With `per_row` (for by-value results), each call runs in that context,
 * reset after it: what the function allocates (detoasted arguments, its
 * working structures) is freed at once, as the row executor's per-tuple
 * context does, instead of piling up for the whole batch. -1, or the index
 * into `rows` of the row whose call raised a deferrable error (discarded). */
int
vx_call_rows(FmgrInfo *flinfo, Oid collation, int nargs, Datum *const *args,
			 int nrows, const uint16 *rows, Datum *out, bool *isnull, MemoryContext per_row)
{
	LOCAL_FCINFO(fcinfo, VX_CALL_MAX_ARGS);
	MemoryContext cxt = CurrentMemoryContext;
	/* errfinish zeroes these before it longjmps; a discarded error must
	 * leave the caller's counts as they were */
	uint32		holdoff = InterruptHoldoffCount;
	uint32		cancel_holdoff = QueryCancelHoldoffCount;
	volatile int i = 0;
	volatile int failed = -1;

	Assert(nargs <= VX_CALL_MAX_ARGS);
	InitFunctionCallInfoData(*fcinfo, flinfo, nargs, collation, NULL, NULL);
	PG_TRY();
	{
		for (; i < nrows; i++)
		{
			int			row = rows[i];

			for (int a = 0; a < nargs; a++)
			{
				fcinfo->args[a].value = args[a][row];
				fcinfo->args[a].isnull = false;
			}
			fcinfo->isnull = false;
			if (per_row)
				MemoryContextSwitchTo(per_row);
			out[row] = FunctionCallInvoke(fcinfo);
			isnull[row] = fcinfo->isnull;
			if (per_row)
			{
				MemoryContextSwitchTo(cxt);
				MemoryContextReset(per_row);
			}
		}
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (edata->elevel != ERROR || !deferrable(edata->sqlerrcode))
			PG_RE_THROW();
		FlushErrorState();
		FreeErrorData(edata);
		InterruptHoldoffCount = holdoff;
		QueryCancelHoldoffCount = cancel_holdoff;
		if (per_row)
			MemoryContextReset(per_row);
		failed = i;
	}
	PG_END_TRY();
	return failed;
}
