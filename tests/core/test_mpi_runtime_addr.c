/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.mpi_runtime_addr — the MPI run-time's TCP endpoints read from the
 * environment (src/mpi/runtime_addr.c), alone, with the variables Open
 * MPI 4.1 and hydra set (as printed by ranks on this machine):
 *  - every URI of a variable counts, tcp://, tcp4:// and tcp6:// alike;
 *  - an address list sharing one port gives that port only, IPv6 in
 *    brackets included;
 *  - PMI_PORT is host:port;
 *  - malformed ports (missing, out of range, not digits) are no ports,
 *    duplicates count once, and the list stops at RUNTIME_PORTS_MAX.
 */
#include "common.h"

#include "runtime_addr.h" /* src/mpi */

#include <stdio.h>

static void expect(char *const *env, const unsigned short *ports, int n, const char *what)
{
	struct runtime_ports rp;
	runtime_ports_read(env, &rp);
	CHECK(rp.n == n, "%s: %d ports read, expected %d", what, rp.n, n);
	for (int i = 0; i < n; i++)
		CHECK(runtime_port_is(&rp, ports[i]), "%s: port %u missing", what,
		      (unsigned)ports[i]);
}

int main(void)
{
	char *ompi[] = {
		"PATH=/usr/bin:/bin",
		"OMPI_MCA_orte_hnp_uri=1150615552.0;tcp://192.0.2.2:47873;tcp6://[fd00::2]:49421",
		"OMPI_MCA_orte_local_daemon_uri=1150615552.0;tcp://192.0.2.2:47873;"
		"tcp6://[fd00::2]:49421",
		"PMIX_SERVER_URI4=1150615552.0;tcp4://127.0.0.1:46371",
		"PMIX_SERVER_URI2=1150615552.0;tcp4://127.0.0.1:46371",
		"PMIX_SERVER_TMPDIR=/tmp/ompi.vm.0/pid.10347",
		NULL,
	};
	static const unsigned short ompi_ports[] = { 47873, 49421, 46371 };
	expect(ompi, ompi_ports, 3, "Open MPI");

	char *several[] = { "OMPI_MCA_orte_hnp_uri=7.0;tcp://10.0.0.1,192.168.1.1,172.16.0.9:5000",
		            "X=tcp6://[fe80::1%eth0],[::1]:5001", NULL };
	static const unsigned short several_ports[] = { 5000, 5001 };
	expect(several, several_ports, 2, "address lists");

	char *hydra[] = { "PMI_RANK=0", "PMI_FD=6", "PMI_PORT=node07:6543", NULL };
	static const unsigned short hydra_ports[] = { 6543 };
	expect(hydra, hydra_ports, 1, "hydra");

	char *bad[] = { "A=tcp://host:",     "B=tcp://host:99999",        "C=tcp://[::1]",
		        "D=tcp://host:12a4", "E=udp://host:7000",         "PMI_PORT=noport",
		        "F=tcp://host:0",    "no equals sign tcp://h:80", NULL };
	expect(bad, NULL, 0, "malformed");

	char *none[] = { NULL };
	expect(none, NULL, 0, "empty environment");
	expect(NULL, NULL, 0, "no environment");

	char big[RUNTIME_PORTS_MAX + 8][40];
	char *many[RUNTIME_PORTS_MAX + 9];
	for (int i = 0; i < RUNTIME_PORTS_MAX + 8; i++) {
		snprintf(big[i], sizeof(big[i]), "U%d=tcp://127.0.0.1:%d", i, 2000 + i);
		many[i] = big[i];
	}
	many[RUNTIME_PORTS_MAX + 8] = NULL;
	struct runtime_ports rp;
	runtime_ports_read(many, &rp);
	CHECK_EQ(rp.n, RUNTIME_PORTS_MAX);
	CHECK(runtime_port_is(&rp, 2000) && !runtime_port_is(&rp, 2000 + RUNTIME_PORTS_MAX),
	      "the first RUNTIME_PORTS_MAX ports are kept");
	CHECK(!runtime_port_is(&rp, 1024), "a port nobody advertised");

	printf("mpi_runtime_addr: ok\n");
	return TEST_PASS;
}
