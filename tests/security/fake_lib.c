/* SPDX-License-Identifier: BSD-3-Clause */
/* Stand-in library that tests/security/cwd_library.sh copies, under the
 * names of the libraries piano's files need, into the directory it starts
 * them from. Its constructor announces it: a file whose RUNPATH makes the
 * loader search the current directory loads it. */
#include <unistd.h>

__attribute__((constructor)) static void announce(void)
{
	static const char msg[] = "fake-lib: loaded from the current directory\n";
	/* stderr is the test's pipe: nothing sensible to do if writing fails. */
	ssize_t n = write(STDERR_FILENO, msg, sizeof msg - 1);
	(void)n;
}
