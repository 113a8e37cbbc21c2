/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI run-time's own TCP endpoints (runtime_addr.c): which of this
 * process's connections belong to the launcher and its daemons rather than
 * to the MPI's data path. Open MPI keeps a loopback connection to its local
 * daemon's PMIx server in every job, shared memory or not; a rank that sees
 * a connected TCP socket must not take that one for MPI traffic. No MPI
 * here: the unit test (tests/core/test_mpi_runtime_addr.c) drives it alone.
 */
#ifndef PIANO_MPI_RUNTIME_ADDR_H
#define PIANO_MPI_RUNTIME_ADDR_H

#include <stdbool.h>

enum { RUNTIME_PORTS_MAX = 32 };

struct runtime_ports {
	unsigned short port[RUNTIME_PORTS_MAX];
	int n;
};

/* Collects the ports of the endpoints the run-time advertises in `env` (an
 * environ-style array, NULL-terminated): every address of every tcp://,
 * tcp4:// and tcp6:// URI in any variable (Open MPI's PMIX_SERVER_URI*,
 * OMPI_MCA_orte_*_uri, with several addresses per port, IPv6 in
 * brackets), and hydra's PMI_PORT (host:port). Ports beyond
 * RUNTIME_PORTS_MAX are dropped. */
void runtime_ports_read(char *const *env, struct runtime_ports *out);

/* Whether a connection whose peer listens on `port` is the run-time's. By
 * port alone: the peer's address may come as a host name (PMI_PORT), an
 * IPv4-mapped IPv6 address or one of several interfaces, and the
 * run-time's endpoints are listening ports of its own daemons, which no
 * rank's MPI connection shares on the same node. */
bool runtime_port_is(const struct runtime_ports *rp, unsigned short port);

#endif
