/*-------------------------------------------------------------------------
 *
 * vexec_column.h
 *	  Writing values into a batch column's buffers, for the C readers
 *	  (vexec_heap.c, vexec_shim.c). Private to csrc/.
 *
 *-------------------------------------------------------------------------
 */
#ifndef VEXEC_COLUMN_H
#define VEXEC_COLUMN_H

#include "vexec_shim.h"

/* ------------------------------------------------------------------------
 * Writing one value into a column buffer
 * ------------------------------------------------------------------------
 */
static inline void
vx_store(const VxColumn *col, int row, Datum d)
{
	switch (col->kind)
	{
		case VX_KIND_U8:
			((uint8 *) col->values)[row] = DatumGetBool(d) ? 1 : 0;
			break;
		case VX_KIND_CHAR:
			((int16 *) col->values)[row] = (int16) DatumGetChar(d);
			break;
		case VX_KIND_I16:
			((int16 *) col->values)[row] = DatumGetInt16(d);
			break;
		case VX_KIND_W4:
			((int32 *) col->values)[row] = DatumGetInt32(d);
			break;
		default:
			((Datum *) col->values)[row] = d;
			break;
	}
}

static inline void
vx_set_null(const VxColumn *col, int row)
{
	col->validity[row >> 3] &= ~(1 << (row & 7));
}

static inline void
vx_reset_validity(VxColumn *cols, int ncols, int capacity)
{
	for (int c = 0; c < ncols; c++)
		memset(cols[c].validity, 0xff, (capacity + 7) / 8);
}

#endif							/* VEXEC_COLUMN_H */
