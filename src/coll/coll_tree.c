/* SPDX-License-Identifier: BSD-3-Clause */
/* Shapes the collectives' graphs share: the binomial tree, segments, and
 * the tuning that chooses among them. */
#include "coll_algo.h"

#include <limits.h>

long coll_redscat_min = 16384, coll_node_segment;
bool coll_world_one_node;
int coll_cache_max = 16;
int coll_window = 8;
long coll_bruck_max = 256;
int coll_bruck_min_ranks = 8;
long coll_bcast_scatter_min = 524288;
int coll_bcast_scatter_min_ranks = 8;
bool coll_bcast_scatter_node;

void coll_tune(const struct coll_tuning *t)
{
	coll_window = t->window;
	coll_bruck_max = t->bruck_max;
	coll_bruck_min_ranks = t->bruck_min_ranks;
	coll_cache_max = t->cache_max;
	coll_redscat_min = t->redscat_min;
	coll_node_segment = t->node_segment;
	coll_world_one_node = t->world_one_node;
	coll_bcast_scatter_min = t->bcast_scatter_min;
	coll_bcast_scatter_min_ranks = t->bcast_scatter_min_ranks;
	coll_bcast_scatter_node = t->bcast_scatter_node;
}

int coll_tree(int vr, int size, int *parent, int children[32])
{
	/* vr's subtree spans [vr, vr + low) where low is vr's lowest set bit
	 * (for the root, the power of two at or above size): its children
	 * are vr + m for the powers of two m < low. */
	unsigned low = 1;
	if (vr == 0) {
		while (low < (unsigned)size)
			low <<= 1;
		*parent = -1;
	} else {
		low = (unsigned)vr & (0u - (unsigned)vr);
		*parent = vr - (int)low;
	}
	int n = 0;
	for (unsigned m = low >> 1; m >= 1; m >>= 1)
		if ((unsigned)vr + m < (unsigned)size)
			children[n++] = vr + (int)m;
	return n;
}

/* One element's bytes: MPI_Count, since the int MPI_Type_size says
 * MPI_UNDEFINED past INT_MAX (a large-count call's contiguous type). */
static MPI_Count element_bytes(MPI_Datatype type)
{
	MPI_Count size = -1;
#if MPI_VERSION >= 4
	if (PMPI_Type_size_c(type, &size) != MPI_SUCCESS)
		return -1;
#else
	if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS)
		return -1;
#endif
	return size;
}

/* t's combiner (MPI_UNDEFINED when the MPI cannot say). */
static int combiner_of(MPI_Datatype t)
{
	int combiner = MPI_UNDEFINED;
#if MPI_VERSION >= 4
	/* MPICH refuses the int form on a datatype made with large counts. */
	MPI_Count ni, na, nl, nd;
	if (PMPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &combiner) != MPI_SUCCESS)
		return MPI_UNDEFINED;
#else
	int ni, na, nd;
	if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
		return MPI_UNDEFINED;
#endif
	return combiner;
}

static bool named(int combiner)
{
	return combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
	       combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER;
}

bool coll_type_named(MPI_Datatype t) { return named(combiner_of(t)); }

/* The datatype a contiguous type or a duplicate is made of, NULL when the
 * MPI cannot say (a new handle unless named: the caller frees it). */
static MPI_Datatype inner_of(MPI_Datatype t)
{
	MPI_Datatype inner = MPI_DATATYPE_NULL;
	int ints[1];
	MPI_Aint aints[1];
#if MPI_VERSION >= 4
	MPI_Count ni, na, nl, nd, counts[1];
	int combiner;
	if (PMPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &combiner) != MPI_SUCCESS || nd != 1 ||
	    ni > 1 || na > 0 || nl > 1 ||
	    PMPI_Type_get_contents_c(t, ni, na, nl, nd, ints, aints, counts, &inner) != MPI_SUCCESS)
		return MPI_DATATYPE_NULL;
#else
	int ni, na, nd, combiner;
	if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS || nd != 1 ||
	    ni > 1 || na > 0 ||
	    PMPI_Type_get_contents(t, ni, na, nd, ints, aints, &inner) != MPI_SUCCESS)
		return MPI_DATATYPE_NULL;
#endif
	return inner;
}

/* Whether t's type map runs in memory order: a named type, or contiguous
 * types and duplicates of one. */
static bool in_order(MPI_Datatype t, int depth)
{
	int combiner = combiner_of(t);
	if (named(combiner))
		return true;
	if ((combiner != MPI_COMBINER_CONTIGUOUS && combiner != MPI_COMBINER_DUP) || depth >= 16)
		return false;
	MPI_Datatype inner = inner_of(t);
	if (inner == MPI_DATATYPE_NULL)
		return false;
	bool ok = in_order(inner, depth + 1);
	if (!named(combiner_of(inner)))
		PMPI_Type_free(&inner);
	return ok;
}

bool coll_type_dense(MPI_Datatype t, MPI_Aint *shift)
{
	MPI_Aint lb, ext, tlb, text;
	MPI_Count size = element_bytes(t);
	if (size <= 0 || PMPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS ||
	    PMPI_Type_get_true_extent(t, &tlb, &text) != MPI_SUCCESS || ext != size ||
	    text != size || !in_order(t, 0))
		return false;
	*shift = tlb;
	return true;
}

long coll_bytes(int count, MPI_Datatype type)
{
	MPI_Count size = element_bytes(type);
	long b;
	if (size < 0 || count < 0)
		return -1;
	return __builtin_mul_overflow((long)count, (long)size, &b) ? LONG_MAX : b;
}

int coll_segments(int count, MPI_Datatype type, long segment, int max, int *seg_count)
{
	MPI_Count size = element_bytes(type);
	long per = size > 0 ? segment / (long)size : count;
	if (per < 1)
		per = 1;
	if (per > count)
		per = count; /* one segment; also keeps *seg_count an int */
	if (count <= 0) {
		*seg_count = 0;
		return 1;
	}
	long nseg = (count + per - 1) / per;
	if (nseg > max) {
		per = (count + (long)max - 1) / max;
		nseg = (count + per - 1) / per;
	}
	*seg_count = (int)per;
	return (int)nseg;
}
