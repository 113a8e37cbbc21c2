/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The overlap report's output (report_out.c; docs/report.md): at
 * MPI_Finalize every rank's rows go to rank 0 over MPI, which merges them
 * by call site and writes PATH (an aligned text table, with diagnoses) and
 * PATH.json (the same numbers for tools: tools/piano-report).
 */
#ifndef PIANO_MPI_REPORT_OUT_H
#define PIANO_MPI_REPORT_OUT_H

/* Reads PIANO_REPORT at set-up (init.c); an empty value records nothing.
 * Returns -1 after a message when this rank cannot record: it then runs
 * unrecorded, but still takes part in report_finish. */
int report_open(void);

/* At MPI_Finalize, after the engine stopped and before piano_finalize:
 * collective over MPI_COMM_WORLD on every rank where PIANO_REPORT is set,
 * recording or not (PIANO_REPORT must be set on every rank, as piano-run
 * makes it); a rank that records nothing is named in the report. */
void report_finish(void);

#endif
