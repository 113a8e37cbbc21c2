/* Error strings and diagnostics. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

PIANO_API const char *piano_strerror(int err)
{
	switch (err) {
	case PIANO_OK: return "success";
	case PIANO_EINVAL: return "invalid argument";
	case PIANO_ENOMEM: return "out of memory";
	case PIANO_EBUSY: return "object in use (ltask queued or running)";
	case PIANO_EDEADLK: return "wait from inside a running ltask would deadlock";
	case PIANO_ECANCELED: return "ltask cancelled";
	case PIANO_EAGAIN: return "not complete yet";
	case PIANO_ETIMEDOUT: return "wait timed out";
	case PIANO_ECONFIG: return "invalid configuration (environment variable)";
	case PIANO_ESYS: return "system or hwloc call failed";
	case PIANO_ENOTINIT: return "piano is not initialised";
	case PIANO_ESTATE: return "operation not valid in the object's current state";
	case PIANO_ERANGE: return "index out of range";
	default: return "unknown piano error code";
	}
}

void piano_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("piano: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
