/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI layer's shared ground (base.h). */
#include "base.h"
#include "sys.h"

#include <piano/settings.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct pmpi_state pmpi_g;

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

int pmpi_type_bytes(MPI_Count count, MPI_Datatype type, long *bytes)
{
	int size = 0;
	if (count < 0 || PMPI_Type_size(type, &size) != MPI_SUCCESS || size < 0)
		return -1;
	*bytes = size && count > LONG_MAX / size ? LONG_MAX : (long)count * size;
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
