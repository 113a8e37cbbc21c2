/* SPDX-License-Identifier: BSD-3-Clause */
/* The benchmarks of piano-bench-core, one file each. */
#ifndef PIANO_BENCH_BENCHES_H
#define PIANO_BENCH_BENCHES_H

/* Each returns 0 on success, -1 after printing why it failed. */
int bench_poll(void);         /* bench_poll.c */
int bench_submit(void);       /* bench_submit.c */
int bench_reaction(void);     /* bench_reaction.c */
int bench_interference(void); /* bench_interference.c */
int bench_cond(void);         /* bench_cond.c */
int bench_groups(void);       /* bench_groups.c */

#endif
