/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI run-time's own TCP endpoints (runtime_addr.h). */
#include "runtime_addr.h"

#include <string.h>

static void add(struct runtime_ports *rp, unsigned long port)
{
	if (port == 0 || port > 65535 || runtime_port_is(rp, (unsigned short)port) ||
	    rp->n == RUNTIME_PORTS_MAX)
		return;
	rp->port[rp->n++] = (unsigned short)port;
}

/* The port after the last ':' of s[0, len) if only digits follow it. */
static void add_last_port(struct runtime_ports *rp, const char *s, size_t len)
{
	size_t colon = len;
	while (colon > 0 && s[colon - 1] != ':')
		colon--;
	if (colon == 0 || colon == len)
		return;
	unsigned long port = 0;
	for (size_t i = colon; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || port > 65535)
			return;
		port = port * 10 + (unsigned long)(s[i] - '0');
	}
	add(rp, port);
}

/* Every tcp://, tcp4:// or tcp6:// URI in value: its authority runs to the
 * next ';' (Open MPI separates URIs with it), space or the end; one port
 * ends it, after one or more comma-separated addresses. */
static void scan_uris(struct runtime_ports *rp, const char *value)
{
	static const char *const schemes[] = { "tcp://", "tcp4://", "tcp6://" };
	for (const char *p = strstr(value, "tcp"); p; p = strstr(p + 1, "tcp")) {
		for (size_t k = 0; k < sizeof(schemes) / sizeof(schemes[0]); k++) {
			size_t n = strlen(schemes[k]);
			if (strncmp(p, schemes[k], n) != 0)
				continue;
			const char *auth = p + n;
			add_last_port(rp, auth, strcspn(auth, "; \t/"));
			break;
		}
	}
}

void runtime_ports_read(char *const *env, struct runtime_ports *out)
{
	out->n = 0;
	for (char *const *e = env; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		if (strncmp(*e, "PMI_PORT=", 9) == 0)
			add_last_port(out, eq + 1, strlen(eq + 1));
		else
			scan_uris(out, eq + 1);
	}
}

bool runtime_port_is(const struct runtime_ports *rp, unsigned short port)
{
	for (int i = 0; i < rp->n; i++)
		if (rp->port[i] == port)
			return true;
	return false;
}
