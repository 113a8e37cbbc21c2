/* SPDX-License-Identifier: BSD-3-Clause */
/* Error strings and diagnostics. */
#include "warn.h"

#include <piano/piano.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* Written once by warn_set_tag() before any thread of piano's may warn
 * (the MPI layer sets it before piano_init); read-only afterwards. */
static char warn_tag[48];

void warn_set_tag(const char *tag)
{
	snprintf(warn_tag, sizeof(warn_tag), "%s", tag ? tag : "");
}

void warn_line(const char *who, const char *fmt, ...)
{
	/* One write(2) per line: the lines of several ranks or threads sharing
	 * a terminal or a launcher's pipe interleave whole, never mid-line. */
	char line[1024];
	int n = snprintf(line, sizeof(line), warn_tag[0] ? "%s (%s): " : "%s: ", who, warn_tag);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	size_t len = m < 0 ? (size_t)n : (size_t)n + (size_t)m;
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2; /* truncated: still one line */
	line[len++] = '\n';
	for (size_t off = 0; off < len;) {
		ssize_t w = write(STDERR_FILENO, line + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		off += (size_t)w;
	}
}
