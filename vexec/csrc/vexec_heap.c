/*-------------------------------------------------------------------------
 *
 * vexec_heap.c
 *	  The heap page reader of VecScan: pages from heap's own read stream,
 *	  visibility by heap_prepare_pagescan() (on PostgreSQL 19 its batched
 *	  MVCC check), and only the needed columns deformed straight into the
 *	  batch's buffers. Called once per batch inside a guarded call, as the
 *	  rest of the shim (see vexec_shim.c).
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
 * Heap page reader
 *
 * A scan of cached pages waits on memory, not on instructions: every
 * tuple's first load misses the caches. These keep those waits short:
 *   - the reader holds the next page pinned one page ahead (pinned
 *     directly while it is in the buffer after the previous page's, see
 *     vx_pin_direct, else from the read stream) and prefetches its header
 *     and line pointers, which heap_prepare_pagescan() reads first;
 *   - a page whose tuples are read has its tuple space loaded first in
 *     ascending order (vx_load_tuple_space), not in the descending order
 *     of its line pointers;
 *   - the tuples of a page are taken a run at a time: first every tuple's
 *     pointer and header check, then each needed fixed-offset column in its
 *     own tight loop, so the loads of many tuples are in flight together;
 *   - a scan that needs no column (count(*)) does not touch tuples at all.
 * ------------------------------------------------------------------------
 */
/* A set of columns deformed together, sorted by attnum */
typedef struct VxColumnSet
{
	int			ncols;
	VxColumn   *cols;
	int			max_attnum;
	int		   *load;			/* VX_LOAD_* per column */
	/*
	 * Whether every column is at a fixed offset in a tuple without NULLs (the
	 * leading fixed-width attributes, or the variable-length one right after
	 * them); then fast_off holds each one's offset.
	 */
	bool		fast;
	uint32	   *fast_off;		/* offset from the tuple's data */
	/*
	 * Whether tuples without NULLs can be walked attribute by attribute up
	 * to the last column (every attribute before it has a length: no
	 * cstrings) and every column has a load kind. A fast set is walkable.
	 */
	bool		walkable;
} VxColumnSet;

/* How a column's value is loaded from its address in a tuple */
#define VX_LOAD_NONE	-1		/* none of the kinds below: the general path */
#define VX_LOAD_U8		0		/* bool */
#define VX_LOAD_CHAR	1		/* "char", widened to int16 */
#define VX_LOAD_I16		2
#define VX_LOAD_W4		3
#define VX_LOAD_W8		4		/* 8-byte by-value, stored as a Datum */
#define VX_LOAD_REF		5		/* by reference (fixed-length or varlena): a pointer */

/*
 * Store k values of column `col`, loaded as `load_kind` from ADDR(i), into
 * rows ROW(i) of the batch: one loop per kind. ROW and ADDR are macros of i.
 */
#define VX_STORE_RUN(col, load_kind, k, ROW, ADDR) \
	do { \
		switch (load_kind) \
		{ \
			case VX_LOAD_U8: \
				for (int i = 0; i < (k); i++) \
					((uint8 *) (col)->values)[ROW(i)] = *(const uint8 *) (ADDR(i)) != 0; \
				break; \
			case VX_LOAD_CHAR: \
				for (int i = 0; i < (k); i++) \
					((int16 *) (col)->values)[ROW(i)] = (int16) *(const char *) (ADDR(i)); \
				break; \
			case VX_LOAD_I16: \
				for (int i = 0; i < (k); i++) \
					((int16 *) (col)->values)[ROW(i)] = *(const int16 *) (ADDR(i)); \
				break; \
			case VX_LOAD_W4: \
				for (int i = 0; i < (k); i++) \
					((int32 *) (col)->values)[ROW(i)] = *(const int32 *) (ADDR(i)); \
				break; \
			case VX_LOAD_W8: \
				for (int i = 0; i < (k); i++) \
					((Datum *) (col)->values)[ROW(i)] = *(const Datum *) (ADDR(i)); \
				break; \
			case VX_LOAD_REF: \
				for (int i = 0; i < (k); i++) \
					((Datum *) (col)->values)[ROW(i)] = PointerGetDatum(ADDR(i)); \
				break; \
		} \
	} while (0)

struct VxHeapReader
{
	HeapScanDesc scan;
	TupleDesc	tupdesc;
	/*
	 * Early columns are deformed for every tuple as the batch is read; late
	 * columns only for the rows that need them (vx_heap_deform_late), e.g.
	 * those that passed the quals. Tuple pointers stay valid meanwhile: the
	 * batch keeps its pages pinned.
	 */
	VxColumnSet early;
	VxColumnSet late;
	HeapTupleHeader *tuples;	/* the batch's tuples */
	char	  **data;			/* their data (tuple + t_hoff), for early columns */
	bool		touch_tuples;	/* some column or the tids are read */
	int			capacity;
	/*
	 * Offsets of the leading fixed-width attributes in a tuple without NULLs
	 * (attributes before the first variable-length one).
	 */
	int			nfixed;
	uint32	   *fixed_off;
	/*
	 * When the attribute after the fixed prefix is variable-length, it
	 * starts right after the prefix (aligned unless its header is short):
	 * its 1-based attnum, else 0. fixed_end: where the prefix ends.
	 */
	int			first_varlena;
	uint32		fixed_end;
	uint32	   *offs;			/* per-tuple offsets of a walk */
	ItemPointerData *tids;		/* or NULL */
	bool		keep_pins;		/* a column is by-reference */
	int			max_pins;
	Buffer	   *pins;			/* pages whose tuples the current batch uses */
	int			npins;
	Buffer		cur_buf;		/* page being read (also in pins when kept) */
	Page		cur_page;
	BlockNumber cur_block;
	uint32		cur_index;		/* next entry of scan->rs_vistuples */
	/* the stream's next page, pinned ahead (InvalidBuffer: none yet) */
	Buffer		next_buf;
	bool		stream_done;	/* the stream returned its last page */
	/*
	 * Pages are pinned directly, without the stream, while each one is in
	 * the buffer after the previous page's (see vx_pin_direct); `recent` is
	 * the last page pinned that way.
	 */
	bool		direct;
	Buffer		recent;
	uint64		direct_pins;	/* pages pinned by ReadRecentBuffer() */
	bool		finished;
	uint64		pages;
	uint64		ntuples_read;
};

static bool vx_direct_allowed(HeapScanDesc scan);

/* The first lines of a page: its header and line pointers */
#define VX_HEADER_LINES 8

static void
vx_column_set(VxHeapReader *r, VxColumnSet *set, int ncols, const VxColumn *cols)
{
	TupleDesc	desc = r->tupdesc;

	set->ncols = ncols;
	set->cols = palloc(sizeof(VxColumn) * Max(ncols, 1));
	memcpy(set->cols, cols, sizeof(VxColumn) * ncols);
	set->max_attnum = ncols > 0 ? cols[ncols - 1].attnum : 0;
	set->load = palloc(sizeof(int) * Max(ncols, 1));
	set->fast_off = palloc(sizeof(uint32) * Max(ncols, 1));
	set->fast = ncols > 0;
	set->walkable = ncols > 0;
	for (int c = 0; c < ncols; c++)
	{
		int			a = cols[c].attnum - 1;
		CompactAttribute *att = TupleDescCompactAttr(desc, a);

		if (att->attlen == -1 || !att->attbyval)
			set->load[c] = att->attlen == -2 ? VX_LOAD_NONE : VX_LOAD_REF;
		else if (cols[c].kind == VX_KIND_U8)
			set->load[c] = VX_LOAD_U8;
		else if (cols[c].kind == VX_KIND_CHAR)
			set->load[c] = VX_LOAD_CHAR;
		else if (att->attlen == 2)
			set->load[c] = VX_LOAD_I16;
		else if (att->attlen == 4)
			set->load[c] = VX_LOAD_W4;
		else if (att->attlen == 8)
			set->load[c] = VX_LOAD_W8;
		else
			set->load[c] = VX_LOAD_NONE;	/* a by-value width the kinds do not cover */
		if (set->load[c] == VX_LOAD_NONE)
			set->fast = set->walkable = false;
		if (cols[c].attnum == r->first_varlena)
			set->fast_off[c] = r->fixed_end;
		else if (cols[c].attnum <= r->nfixed)
			set->fast_off[c] = r->fixed_off[a];
		else
			set->fast = false;
	}
	for (int a = 0; a < set->max_attnum; a++)
		if (TupleDescCompactAttr(desc, a)->attlen == -2)
			set->walkable = false;
}

/*
 * The next block of a serial forward scan, as heapam's own read stream
 * callback gives it: from rs_startblock (where a synchronized scan joins the
 * others) round the relation, within heap_setscanlimits()'s rs_numblocks,
 * reporting the position to the synchronized-scan logic.
 */
static BlockNumber
vx_stream_next_block(ReadStream *stream, void *callback_private_data, void *per_buffer_data)
{
	HeapScanDesc scan = (HeapScanDesc) callback_private_data;
	BlockNumber block;

	if (!scan->rs_inited)
	{
		scan->rs_inited = true;
		block = (scan->rs_nblocks == 0 || scan->rs_numblocks == 0) ? InvalidBlockNumber : scan->rs_startblock;
	}
	else
	{
		block = scan->rs_prefetch_block + 1;
		if (block >= scan->rs_nblocks)
			block = 0;
		if (scan->rs_base.rs_flags & SO_ALLOW_SYNC)
			ss_report_location(scan->rs_base.rs_rd, block);
		if (block == scan->rs_startblock)
			block = InvalidBlockNumber;
		else if (scan->rs_numblocks != InvalidBlockNumber && --scan->rs_numblocks == 0)
			block = InvalidBlockNumber;
	}
	scan->rs_prefetch_block = block;
	return block;
}

/*
 * The next block of a parallel scan, as heapam's own callback gives it: the
 * participants share the relation's blocks in chunks through the parallel
 * scan descriptor. PostgreSQL 19 passes the scan's block limits (TID range
 * scans set them; a sequential scan leaves them at their defaults), as
 * heapam does.
 */
static BlockNumber
vx_stream_next_block_parallel(ReadStream *stream, void *callback_private_data, void *per_buffer_data)
{
	HeapScanDesc scan = (HeapScanDesc) callback_private_data;
	ParallelBlockTableScanDesc pbscan = (ParallelBlockTableScanDesc) scan->rs_base.rs_parallel;

	if (!scan->rs_inited)
	{
#if PG_VERSION_NUM >= 190000
		table_block_parallelscan_startblock_init(scan->rs_base.rs_rd, scan->rs_parallelworkerdata, pbscan,
												 scan->rs_startblock, scan->rs_numblocks);
#else
		table_block_parallelscan_startblock_init(scan->rs_base.rs_rd, scan->rs_parallelworkerdata, pbscan);
#endif
		scan->rs_inited = true;
	}
	scan->rs_prefetch_block = table_block_parallelscan_nextpage(scan->rs_base.rs_rd,
																scan->rs_parallelworkerdata, pbscan);
	return scan->rs_prefetch_block;
}

/*
 * A table larger than a quarter of shared_buffers is read through a ring of
 * buffers (BAS_BULKREAD), so that one scan does not evict the buffer pool.
 * heapam sizes the ring for its read stream's look-ahead and one page in
 * use; a ring buffer still pinned when its turn comes is replaced by another
 * from the pool, so the pages a batch holds would stay behind in shared
 * buffers (a few scans fill the pool with the table, and every later backend
 * then pays a page fault per buffer it touches). For a serial scan, read
 * through a ring wider by the pages a batch may hold: heapam's stream is
 * replaced by one on that ring, with heapam's block order (serial) or block
 * allocation (parallel: the same chunks of the shared descriptor).
 */
static void
vx_widen_ring(HeapScanDesc scan, int extra)
{
	BufferAccessStrategy ring;
	int			ios;
	int			stream_pins;
	int			nbuffers;

	if (scan->rs_strategy == NULL || scan->rs_read_stream == NULL || scan->rs_inited)
		return;
	/* the stream's own limit, as read_stream_begin_relation() sets it */
	ios = get_tablespace_io_concurrency(scan->rs_base.rs_rd->rd_rel->reltablespace);
	stream_pins = Min((Min(ios, PG_INT16_MAX) + 1) * io_combine_limit, (int) GetPinLimit());
	nbuffers = Max(GetAccessStrategyBufferCount(scan->rs_strategy), stream_pins) + extra;
	/* lives as long as the scan's memory: the stream keeps a pointer to it */
	ring = GetAccessStrategyWithSize(BAS_BULKREAD, nbuffers * (BLCKSZ / 1024));
	read_stream_end(scan->rs_read_stream);
	scan->rs_read_stream = read_stream_begin_relation(READ_STREAM_SEQUENTIAL | READ_STREAM_USE_BATCHING,
													  ring, scan->rs_base.rs_rd, MAIN_FORKNUM,
													  scan->rs_base.rs_parallel != NULL ?
													  vx_stream_next_block_parallel : vx_stream_next_block,
													  scan, 0);
}

VxHeapReader *
vx_heap_begin(TableScanDesc scan, int nearly, VxColumn *early, int nlate, VxColumn *late,
			  int capacity, bool keep_pins, int max_pins)
{
	VxHeapReader *r = palloc0(sizeof(VxHeapReader));

	r->scan = (HeapScanDesc) scan;
	r->tupdesc = RelationGetDescr(scan->rs_rd);
	{
		TupleDesc	desc = r->tupdesc;
		uint32		off = 0;

		r->fixed_off = palloc(sizeof(uint32) * Max(desc->natts, 1));
		r->nfixed = 0;
		for (int a = 0; a < desc->natts; a++)
		{
			CompactAttribute *att = TupleDescCompactAttr(desc, a);

			if (att->attlen <= 0)
			{
				if (att->attlen == -1)
					r->first_varlena = a + 1;
				break;
			}
			off = att_nominal_alignby(off, att->attalignby);
			r->fixed_off[a] = off;
			off += att->attlen;
			r->nfixed = a + 1;
		}
		r->fixed_end = off;
	}
	vx_column_set(r, &r->early, nearly, early);
	vx_column_set(r, &r->late, nlate, late);
	r->capacity = capacity;
	r->tuples = palloc(sizeof(HeapTupleHeader) * capacity);
	r->data = palloc(sizeof(char *) * capacity);
	r->offs = palloc(sizeof(uint32) * capacity);
	r->touch_tuples = nearly > 0 || nlate > 0;
	if (nlate > 0)
		keep_pins = true;
	r->keep_pins = keep_pins;

	/*
	 * A batch keeps its pages pinned; leave most of the backend's pin budget
	 * (shared or, for temporary tables, local buffers) to the read stream
	 * and to other nodes.
	 */
	{
		uint32		budget = RelationUsesLocalBuffers(scan->rs_rd) ? GetLocalPinLimit() : GetPinLimit();

		max_pins = Min(max_pins, (int) (budget / 4));
	}

	r->max_pins = Max(max_pins, 2);
	if (keep_pins)
		vx_widen_ring(r->scan, r->max_pins + 2);
	r->pins = palloc(sizeof(Buffer) * r->max_pins);
	r->cur_buf = InvalidBuffer;
	r->next_buf = InvalidBuffer;
	r->direct = vx_direct_allowed(r->scan);
	r->recent = InvalidBuffer;
	/* heap's read stream callbacks read the direction; we only go forward */
	r->scan->rs_dir = ForwardScanDirection;
	return r;
}

/*
 * Choose the early and late columns again, before the first batch: a
 * parent that reads some columns only for some rows (a join's outer
 * columns other than its keys, for the rows that found a match) asked for
 * them to be read late.
 */
void
vx_heap_set_columns(VxHeapReader *r, int nearly, VxColumn *early, int nlate, VxColumn *late)
{
	Assert(r->pages == 0);
	vx_column_set(r, &r->early, nearly, early);
	vx_column_set(r, &r->late, nlate, late);
	r->touch_tuples = nearly > 0 || nlate > 0 || r->tids != NULL;
	if (nlate > 0 && !r->keep_pins)
	{
		r->keep_pins = true;
		vx_widen_ring(r->scan, r->max_pins + 2);
	}
}

void
vx_heap_set_tids(VxHeapReader *r, ItemPointerData *tids)
{
	r->tids = tids;
	if (tids)
		r->touch_tuples = true;
}

/* Release every pin the reader holds (end of scan, rescan, or ERROR cleanup
 * by the caller before it frees the reader). */
void
vx_heap_release(VxHeapReader *r)
{
	for (int i = 0; i < r->npins; i++)
		ReleaseBuffer(r->pins[i]);
	r->npins = 0;
	if (!r->keep_pins && BufferIsValid(r->cur_buf))
		ReleaseBuffer(r->cur_buf);
	r->cur_buf = InvalidBuffer;
	r->cur_page = NULL;
	if (BufferIsValid(r->next_buf))
		ReleaseBuffer(r->next_buf);
	r->next_buf = InvalidBuffer;
}

/* The scan was restarted (table_rescan): forget the current page. */
void
vx_heap_restart(VxHeapReader *r)
{
	vx_heap_release(r);
	r->finished = false;
	r->stream_done = false;
	r->direct = vx_direct_allowed(r->scan);
	r->recent = InvalidBuffer;
	r->cur_index = 0;
	r->scan->rs_dir = ForwardScanDirection;
}

void
vx_heap_stats(VxHeapReader *r, uint64 *pages, uint64 *tuples)
{
	*pages = r->pages;
	*tuples = r->ntuples_read;
}

/* Pages pinned without a buffer mapping lookup (vx_pin_direct). */
uint64
vx_heap_direct_pins(VxHeapReader *r)
{
	return r->direct_pins;
}

/* Pins the backend may still take (shared or local buffers). */
static inline uint32
vx_pins_left(VxHeapReader *r)
{
	return RelationUsesLocalBuffers(r->scan->rs_base.rs_rd) ? GetAdditionalLocalPinLimit() : GetAdditionalPinLimit();
}

/* Whether a scan may pin its pages directly (vx_pin_direct): a table in
 * shared buffers read without a ring (a direct pin raises a buffer's usage
 * count as a plain read does, which a ring's reads would not). */
static bool
vx_direct_allowed(HeapScanDesc scan)
{
	return scan->rs_strategy == NULL && !RelationUsesLocalBuffers(scan->rs_base.rs_rd) &&
		scan->rs_read_stream != NULL;
}

/*
 * Pin the scan's next block without the read stream (its block order, or
 * for a parallel scan the next block of the participant's share). A table
 * read into shared buffers in order sits in consecutive buffers, so the
 * block after the previous page's is usually in the buffer after it:
 * ReadRecentBuffer() checks that buffer's tag and pins it, where a read
 * looks the block up in the buffer mapping table under a partition lock
 * (two or three cache misses per page: a fifth of a cached count(*) scan's
 * time, with the stream's own bookkeeping). Any other block is read as
 * heapam reads it; at the first one that was not in shared buffers the scan
 * goes back to the read stream (look-ahead, asynchronous reads) for good.
 */
static void
vx_pin_direct(VxHeapReader *r)
{
	HeapScanDesc scan = r->scan;
	Relation	rel = scan->rs_base.rs_rd;
	BlockNumber block = scan->rs_base.rs_parallel != NULL ?
		vx_stream_next_block_parallel(NULL, scan, NULL) : vx_stream_next_block(NULL, scan, NULL);
	int64		reads;

	if (!BlockNumberIsValid(block))
	{
		r->stream_done = true;
		return;
	}
	if (BufferIsValid(r->recent) && r->recent < NBuffers &&
		ReadRecentBuffer(rel->rd_locator, MAIN_FORKNUM, block, r->recent + 1))
	{
		/* counted as heapam's reads count a hit */
		pgstat_count_buffer_read(rel);
		pgstat_count_buffer_hit(rel);
		r->next_buf = r->recent = r->recent + 1;
		r->direct_pins++;
		return;
	}
	reads = pgBufferUsage.shared_blks_read;
	r->next_buf = r->recent = ReadBufferExtended(rel, MAIN_FORKNUM, block, RBM_NORMAL, NULL);
	if (pgBufferUsage.shared_blks_read != reads)
		r->direct = false;		/* from disk: the stream reads ahead from here on */
}

/* Pin the scan's next page (directly or from the stream) and prefetch its
 * header and line pointers (heap_prepare_pagescan() reads them first). */
static void
vx_heap_pin_ahead(VxHeapReader *r)
{
	Buffer		buf;

	if (r->stream_done)
		return;
	if (r->direct)
	{
		vx_pin_direct(r);
		if (r->stream_done)
			return;
		buf = r->next_buf;
	}
	else
		buf = read_stream_next_buffer(r->scan->rs_read_stream, NULL);
	if (!BufferIsValid(buf))
	{
		r->stream_done = true;
		return;
	}
	r->next_buf = buf;
	{
		const char *p = (const char *) BufferGetPage(buf);

		for (int line = 0; line < VX_HEADER_LINES; line++)
			__builtin_prefetch(p + line * 64);
	}
}

/* Where vx_load_tuple_space() puts what it loaded (so the loads stay). */
static volatile char vx_loaded_sink;

/*
 * Load one byte of each line of the page's tuple space, in ascending
 * address order, before its tuples are read. Line pointer order walks the
 * tuples downwards in memory, which the hardware prefetcher follows poorly
 * (each header load then waits on memory in turn); an ascending pass of
 * independent loads brings the lines in with many misses in flight at once.
 * (Prefetch instructions for the next page's lines did not bring them in
 * time and stalled the loop; a descending pass gained half as much.)
 */
static inline void
vx_load_tuple_space(Page page)
{
	const volatile char *p = (const char *) page;
	PageHeader	ph = (PageHeader) page;
	int			start = (ph->pd_upper / 64) * 64;
	int			end = Min((int) ph->pd_special, BLCKSZ);
	char		acc = 0;

	for (int off = start; off < end; off += 64)
		acc += p[off];
	vx_loaded_sink = acc;
}

/* Move to the next page of the scan; false at the end. */
static bool
vx_heap_next_page(VxHeapReader *r)
{
	HeapScanDesc scan = r->scan;
	Buffer		buf;

	CHECK_FOR_INTERRUPTS();
	if (!BufferIsValid(r->next_buf))
		vx_heap_pin_ahead(r);	/* the first page */
	buf = r->next_buf;
	r->next_buf = InvalidBuffer;
	if (!BufferIsValid(buf))
	{
		r->finished = true;
		scan->rs_cbuf = InvalidBuffer;
		scan->rs_cblock = InvalidBlockNumber;
		scan->rs_inited = false;
		return false;
	}
	/* heap's own page-at-a-time preparation: pruning, batched visibility */
	scan->rs_cbuf = buf;
	scan->rs_cblock = BufferGetBlockNumber(buf);
	heap_prepare_pagescan((TableScanDesc) scan);
	/* from here the pin is ours, not the scan's */
	scan->rs_cbuf = InvalidBuffer;

	r->cur_buf = buf;
	r->cur_block = BufferGetBlockNumber(buf);
	r->cur_page = BufferGetPage(buf);
	r->cur_index = 0;
	r->pages++;
	if (r->keep_pins)
		r->pins[r->npins++] = buf;

	if (r->early.ncols > 0 && scan->rs_ntuples > 0)
		vx_load_tuple_space(r->cur_page);
	vx_heap_pin_ahead(r);
	return true;
}

/* Deform the attributes of `set` of one tuple into row `row` of the batch:
 * NULLs, missing attributes (attmissingval), any layout. */
static void
vx_deform(VxHeapReader *r, const VxColumnSet *set, HeapTupleHeader tup, int row)
{
	TupleDesc	tupdesc = r->tupdesc;
	int			natts = HeapTupleHeaderGetNatts(tup);
	bool		hasnulls = (tup->t_infomask & HEAP_HASNULL) != 0;
	uint8	   *bp = tup->t_bits;
	char	   *tp = (char *) tup + tup->t_hoff;
	uint32		off = 0;
	bool		slow = false;
	int			c = 0;

	for (int attnum = 0; attnum < set->max_attnum; attnum++)
	{
		CompactAttribute *att = TupleDescCompactAttr(tupdesc, attnum);
		VxColumn   *col = &set->cols[c];
		bool		want = (col->attnum == attnum + 1);

		if (attnum >= natts)
		{
			/* attributes added after the tuple was written (attmissingval) */
			for (; c < set->ncols; c++)
			{
				bool		isnull;
				Datum		d = getmissingattr(tupdesc, set->cols[c].attnum, &isnull);

				if (isnull)
					vx_set_null(&set->cols[c], row);
				else
					vx_store(&set->cols[c], row, d);
			}
			return;
		}
		if (hasnulls && att_isnull(attnum, bp))
		{
			if (want)
			{
				vx_set_null(col, row);
				if (++c == set->ncols)
					return;
			}
			slow = true;
			continue;
		}
		if (!slow && att->attcacheoff >= 0)
			off = att->attcacheoff;
		else if (att->attlen == -1)
		{
			if (slow || off != att_nominal_alignby(off, att->attalignby))
			{
				off = att_pointer_alignby(off, att->attalignby, -1, tp + off);
				slow = true;
			}
		}
		else
			off = att_nominal_alignby(off, att->attalignby);

		if (want)
		{
			vx_store(col, row, fetch_att(tp + off, att->attbyval, att->attlen));
			if (++c == set->ncols)
				return;
		}
		off = att_addlength_pointer(off, att->attlen, tp + off);
		if (att->attlen <= 0)
			slow = true;
	}
}

/* Where value i of a run goes: row row0 + i, or dest[i] given a list. */
#define ROW_SEQ(i) (row0 + (i))
#define ROW_DEST(i) (dest[(i)])
/* VX_STORE_RUN into the rows of `dest` if there is one, else from row0 on. */
#define VX_STORE_ROWS(col, load_kind, k, ADDR) \
	do { \
		if (dest) \
			VX_STORE_RUN(col, load_kind, k, ROW_DEST, ADDR); \
		else \
			VX_STORE_RUN(col, load_kind, k, ROW_SEQ, ADDR); \
	} while (0)

/*
 * Deform the columns of a fast set for `k` tuples without NULLs whose data
 * starts at data[0..k), into rows ROW_SEQ(i) or ROW_DEST(i) of the batch:
 * one loop per column.
 */
static void
vx_deform_fast(VxHeapReader *r, const VxColumnSet *set, char **data, int row0, const uint16 *dest, int k)
{
#define ADDR_FIXED(i) (data[(i)] + off)
#define ADDR_VARLENA(i) (data[(i)] + att_pointer_alignby(off, alignby, -1, data[(i)] + off))
	for (int c = 0; c < set->ncols; c++)
	{
		const VxColumn *col = &set->cols[c];
		uint32		off = set->fast_off[c];
		uint8		alignby = TupleDescCompactAttr(r->tupdesc, col->attnum - 1)->attalignby;

		if (col->attnum == r->first_varlena)
			VX_STORE_ROWS(col, VX_LOAD_REF, k, ADDR_VARLENA);
		else
			VX_STORE_ROWS(col, set->load[c], k, ADDR_FIXED);
	}
#undef ADDR_FIXED
#undef ADDR_VARLENA
}

/*
 * Deform the columns of a walkable set for `k` tuples without NULLs whose
 * data starts at data[0..k), into rows ROW(i) of the batch, walking the
 * attributes after the fixed prefix one at a time over all k tuples: each
 * tuple's offsets depend on its own earlier lengths, so taking the tuples
 * side by side lets their loads overlap where one tuple at a time would
 * wait on each in turn (rows with many variable-length columns before the
 * needed ones).
 */
static void
vx_deform_walk(VxHeapReader *r, const VxColumnSet *set, char **data, int row0, const uint16 *dest, int k)
{
#define ADDR_AT(i) (data[(i)] + offs[(i)])
	TupleDesc	desc = r->tupdesc;
	uint32	   *offs = r->offs;
	int			c = 0;

	/* the fixed prefix: columns at their cached offsets */
	for (; c < set->ncols && set->cols[c].attnum <= r->nfixed; c++)
	{
		const VxColumn *col = &set->cols[c];
		uint32		off = r->fixed_off[col->attnum - 1];

#define ADDR_FIXED(i) (data[(i)] + off)
		VX_STORE_ROWS(col, set->load[c], k, ADDR_FIXED);
#undef ADDR_FIXED
	}
	for (int i = 0; i < k; i++)
		offs[i] = r->fixed_end;
	for (int a = r->nfixed; a < set->max_attnum; a++)
	{
		CompactAttribute *att = TupleDescCompactAttr(desc, a);
		bool		want = c < set->ncols && set->cols[c].attnum == a + 1;
		bool		last = a + 1 == set->max_attnum;

		if (att->attlen > 0)
			for (int i = 0; i < k; i++)
				offs[i] = att_nominal_alignby(offs[i], att->attalignby);
		else
			for (int i = 0; i < k; i++)
				offs[i] = att_pointer_alignby(offs[i], att->attalignby, -1, data[i] + offs[i]);
		if (want)
		{
			const VxColumn *col = &set->cols[c];

			VX_STORE_ROWS(col, set->load[c], k, ADDR_AT);
			c++;
		}
		if (last)
			break;
		if (att->attlen > 0)
			for (int i = 0; i < k; i++)
				offs[i] += att->attlen;
		else
			for (int i = 0; i < k; i++)
				offs[i] += VARSIZE_ANY(data[i] + offs[i]);
	}
#undef ADDR_AT
#undef VX_STORE_ROWS
#undef ROW_SEQ
#undef ROW_DEST
}

/*
 * Whether tuples tups[0..k) have no NULLs and at least `need` attributes,
 * filling data[i] with where each one's data starts.
 */
static inline bool
vx_plain_tuples(HeapTupleHeader *tups, char **data, int k, int need)
{
	uint32		slow = 0;

	for (int i = 0; i < k; i++)
	{
		HeapTupleHeader t = tups[i];

		slow |= (t->t_infomask & HEAP_HASNULL) | (HeapTupleHeaderGetNatts(t) < need);
		data[i] = (char *) t + t->t_hoff;
	}
	return slow == 0;
}

/*
 * Take the next `k` visible tuples of the current page into rows n.. of the
 * batch (tuple pointers, tids, early columns).
 */
static void
vx_heap_run(VxHeapReader *r, int n, int k)
{
	HeapScanDesc scan = r->scan;
	Page		page = r->cur_page;
	const OffsetNumber *vis = scan->rs_vistuples + r->cur_index;
	HeapTupleHeader *tups = r->tuples + n;

	if (!r->touch_tuples)
		return;

	for (int i = 0; i < k; i++)
		tups[i] = (HeapTupleHeader) PageGetItem(page, PageGetItemId(page, vis[i]));
	if (r->tids)
		for (int i = 0; i < k; i++)
			ItemPointerSet(&r->tids[n + i], r->cur_block, vis[i]);
	if (r->early.ncols == 0)
		return;
	/* the common case: no NULLs and every needed attribute present */
	if (r->early.walkable &&
		vx_plain_tuples(tups, r->data, k, r->early.max_attnum))
	{
		if (r->early.fast)
			vx_deform_fast(r, &r->early, r->data, n, NULL, k);
		else
			vx_deform_walk(r, &r->early, r->data, n, NULL, k);
		return;
	}
	for (int i = 0; i < k; i++)
		vx_deform(r, &r->early, tups[i], n + i);
}

/*
 * Fill up to `capacity` rows. Returns the number of rows (0: end of scan).
 * Pins of the pages the previous batch used are released first, except the
 * page still being read.
 */
int
vx_heap_next(VxHeapReader *r, int capacity)
{
	int			n = 0;

	/* the previous batch is consumed: drop its pages */
	for (int i = 0; i < r->npins; i++)
		if (r->pins[i] != r->cur_buf)
			ReleaseBuffer(r->pins[i]);
	r->npins = 0;
	if (r->keep_pins && BufferIsValid(r->cur_buf))
		r->pins[r->npins++] = r->cur_buf;

	vx_reset_validity(r->early.cols, r->early.ncols, capacity);
	while (n < capacity)
	{
		HeapScanDesc scan = r->scan;
		int			k;

		if (r->cur_page == NULL || r->cur_index >= scan->rs_ntuples)
		{
			if (r->finished)
				break;
			/* the page is done: keep it pinned only if the batch uses it */
			if (BufferIsValid(r->cur_buf) && !r->keep_pins)
				ReleaseBuffer(r->cur_buf);
			r->cur_buf = InvalidBuffer;
			r->cur_page = NULL;
			/*
			 * A batch holds a bounded number of pins, and never the last
			 * ones the backend has (the read stream needs some): end it early.
			 */
			if (r->keep_pins && n > 0 &&
				(r->npins >= r->max_pins || vx_pins_left(r) < 4))
				break;
			/* no row of this batch is on the pinned pages: let them go */
			if (n == 0)
			{
				for (int i = 0; i < r->npins; i++)
					ReleaseBuffer(r->pins[i]);
				r->npins = 0;
			}
			if (!vx_heap_next_page(r))
				break;
			continue;
		}
		k = Min((int) (scan->rs_ntuples - r->cur_index), capacity - n);
		vx_heap_run(r, n, k);
		r->cur_index += k;
		n += k;
	}
	r->ntuples_read += n;
	/* what heap_getnextslot() counts a tuple at a time (pg_stat's seq_tup_read) */
	if (pgstat_should_count_relation(r->scan->rs_base.rs_rd))
		r->scan->rs_base.rs_rd->pgstat_info->counts.tuples_returned += n;
	return n;
}

/* Deform the late columns of the rows `rows` of the current batch. */
void
vx_heap_deform_late(VxHeapReader *r, int nrows, const uint16 *rows)
{
	const VxColumnSet *set = &r->late;

	vx_reset_validity(set->cols, set->ncols, r->capacity);
	if (set->walkable)
	{
		/* the rows' tuples side by side, when none has NULLs */
		uint32		slow = 0;

		for (int i = 0; i < nrows; i++)
		{
			HeapTupleHeader t = r->tuples[rows[i]];

			slow |= (t->t_infomask & HEAP_HASNULL) | (HeapTupleHeaderGetNatts(t) < set->max_attnum);
			r->data[i] = (char *) t + t->t_hoff;
		}
		if (slow == 0)
		{
			if (set->fast)
				vx_deform_fast(r, set, r->data, 0, rows, nrows);
			else
				vx_deform_walk(r, set, r->data, 0, rows, nrows);
			return;
		}
	}
	for (int i = 0; i < nrows; i++)
	{
		if (i + 4 < nrows)
			__builtin_prefetch(r->tuples[rows[i + 4]]);
		vx_deform(r, set, r->tuples[rows[i]], rows[i]);
	}
}
