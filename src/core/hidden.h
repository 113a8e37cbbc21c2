/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Data that one file of the library defines and others read. Declared
 * hidden, the compiler reads it straight from its address; without, through
 * the GOT (-fvisibility=hidden applies to definitions, not to declarations),
 * which the linker then turns into an address computation and a load: one
 * instruction more on every read, on the hot paths of every MPI call.
 */
#ifndef PIANO_HIDDEN_H
#define PIANO_HIDDEN_H

#define PIANO_HIDDEN __attribute__((visibility("hidden")))

#endif
