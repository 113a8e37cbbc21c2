/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI layer's shared ground (base.h). */
#include "base.h"
#include "sys.h"

#include <piano/settings.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct pmpi_state pmpi_g;
_Atomic long pmpi_watch_n; /* base.h */

long pmpi_setting_text(const char *name, char *text, size_t len, int *source)
{
	long v = 0;
	int rc = piano_setting_read(name, &v, text, len, source);
	if (rc) {
		pmpi_warn("cannot read %s: %s; exiting", name, piano_strerror(rc));
		pmpi_die();
	}
	return v;
}

void pmpi_die(void) { exit(1); }

long pmpi_setting(const char *name, int *source)
{
	return pmpi_setting_text(name, NULL, 0, source);
}

struct pmpi_type_slot pmpi_type_cache[PMPI_TYPE_SLOTS + PMPI_TYPE_PROBES - 1]; /* base.h */

void pmpi_type_cache_setup(void)
{
	const MPI_Datatype types[] = {
		MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_WCHAR, MPI_SHORT,
		MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG,
		MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE,
		MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T,
		MPI_UINT32_T, MPI_UINT64_T, MPI_C_BOOL, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
		MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION,
		MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_LOGICAL, MPI_CHARACTER,
	};
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		int size = 0;
		/* A Fortran type the MPI was built without: left to the MPI. */
		if (PMPI_Type_size(types[t], &size) != MPI_SUCCESS || size <= 0)
			continue;
		unsigned i = pmpi_type_slot(types[t]);
		for (int k = 0; k < PMPI_TYPE_PROBES; k++, i++) {
			if (pmpi_type_cache[i].size == 0) {
				pmpi_type_cache[i].dt = types[t];
				pmpi_type_cache[i].size = size;
				break;
			}
			if (pmpi_type_cache[i].dt == types[t])
				break; /* an alias of a type already cached */
		}
	}
}

bool pmpi_type_predefined(MPI_Datatype type) { return pmpi_type_cached(type) >= 0; }

bool pmpi_op_predefined(MPI_Op op)
{
	const MPI_Op ops[] = { MPI_MAX,    MPI_MIN,    MPI_SUM,     MPI_PROD, MPI_LAND,
		               MPI_BAND,   MPI_LOR,    MPI_BOR,     MPI_LXOR, MPI_BXOR,
		               MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP };
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (op == ops[i])
			return true;
	return false;
}

int pmpi_type_bytes_slow(MPI_Count count, MPI_Datatype type, long *bytes)
{
	/* MPI_Count: the int MPI_Type_size says MPI_UNDEFINED past INT_MAX
	 * bytes (a large-count collective's contiguous type, coll.c). */
	MPI_Count size = -1;
#if MPI_VERSION >= 4
	int rc = count < 0 ? MPI_ERR_COUNT : PMPI_Type_size_c(type, &size);
#else
	int rc = count < 0 ? MPI_ERR_COUNT : PMPI_Type_size_x(type, &size);
#endif
	if (rc != MPI_SUCCESS || size < 0)
		return -1;
	long b;
	*bytes = __builtin_mul_overflow((long)count, (long)size, &b) ? LONG_MAX : b;
	return 0;
}

char *pmpi_fortran_string(const char *f, size_t len)
{
	while (len > 0 && f[0] == ' ') {
		f++;
		len--;
	}
	while (len > 0 && f[len - 1] == ' ')
		len--;
	char *c = malloc(len + 1);
	if (c) {
		memcpy(c, f, len);
		c[len] = '\0';
	}
	return c;
}

bool pmpi_linger(uint64_t *since)
{
	uint64_t now = sys_now_ns();
	if (!*since)
		*since = now;
	if (now - *since < pmpi_g.linger_ns)
		return true;
	*since = 0;
	return false;
}
