/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shadow of a communicator (coll_shadow.c): a duplicate that carries
 * the messages of piano's collectives on it, so they never match the
 * application's own, and the sequence that tags them.
 *
 * Made when the communicator is created (coll_shadow_make(): Open MPI's
 * MPI_Comm_idup is not safe beside the application's collectives,
 * coll_shadow.c). A communicator of one rank without one (and, under
 * PIANO_COLL=auto on MPICH, every one: coll_shadow_allowed()) gets it at
 * its first graph collective, by PMPI_Comm_idup, which never blocks (a
 * blocking dup inside MPI_Ibcast could deadlock with a rank that sends to
 * this one before its own MPI_Ibcast); the first collectives wait for the
 * duplicate inside their graph (a POLL node, coll_shadow_ready()). The
 * shadow is kept as an attribute of the communicator and freed after the
 * communicator is, once no running collective uses it
 * (coll_shadow_reap()).
 */
#ifndef PIANO_COLL_SHADOW_H
#define PIANO_COLL_SHADOW_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct coll_shadow {
	MPI_Comm comm;  /* the duplicate; usable once `ready` */
	int size, rank; /* of the communicator */
	bool in_world;  /* every rank of it is in this process's MPI_COMM_WORLD */
	int tags;       /* tags per collective (coll_shadow_tag()) */
	int tag_span;   /* non-blocking collectives before the tags wrap around */
	/* Tag ranges kept for persistent collectives (coll_shadow_ptag()),
	 * after the tag_span ranges of the non-blocking ones. */
	int pslots;
	/* Collectives started, and persistent ones initialized, on the
	 * communicator. Owner: the application's thread that calls them (MPI
	 * requires a communicator's collectives to be called in one order on
	 * every rank, so never by two threads at once). */
	unsigned seq, pseq;
	/* The PMPI_Comm_idup, tested under `lock` by whichever graph step asks
	 * first; `ready` is set (release) once it completed. */
	pthread_mutex_t lock;
	MPI_Request idup;
	_Atomic int ready;
	int idup_err;
	/* The attribute's reference and one per collective that uses it. */
	_Atomic int refs;
	/* Set (release) when the communicator is freed, before the
	 * attribute's reference is dropped: an operation kept for reuse
	 * (coll_op.c) on a freed communicator is never taken again, even by a
	 * new communicator that got the same handle. */
	_Atomic int comm_freed;
	struct coll_shadow *next_dead; /* freeing list (coll_shadow.c) */
};

/* comm's shadow, made at its first use (MPI error code otherwise); a
 * reference for the caller, dropped with coll_shadow_put(). */
int coll_shadow_get(MPI_Comm comm, struct coll_shadow **out);
void coll_shadow_put(struct coll_shadow *sh);

/* The layer makes each intra-communicator's shadow with coll_shadow_make()
 * when the communicator is created (a blocking duplicate, inside the
 * application's own blocking collective call that created it: every rank
 * is there; with `world_only`, only where every rank of it is in this
 * process's MPI_COMM_WORLD, an answer every rank of it shares: a
 * communicator joined with spawned or connected processes, whose piano may
 * have decided otherwise, gets none), and coll_shadow_allowed() says
 * whether comm (of size ranks) has one or needs none (one rank), or, with
 * `lazy` where coll_shadow_lazy_safe(), may get one by idup at this
 * collective (every rank of it in MPI_COMM_WORLD): graph collectives run
 * only there, the MPI's own elsewhere (every rank of a communicator gets
 * the same answer). */
int coll_shadow_make(MPI_Comm comm, bool world_only);
bool coll_shadow_allowed(MPI_Comm comm, int size, bool lazy);

/* Whether the MPI's MPI_Comm_idup can make a shadow beside the
 * application's own collectives on the communicator (coll_shadow.c):
 * MPICH's can, Open MPI 4.1's cannot. */
bool coll_shadow_lazy_safe(void);

/* A POLL node's condition (graph_internal.h): 1 once the duplicate exists,
 * 0 before, the idup's error made negative. */
int coll_shadow_ready(void *shadow);

/* The first tag of the next collective on sh; its messages use tags
 * base .. base + sh->tags - 1. */
int coll_shadow_tag(struct coll_shadow *sh);

/* The first tag of the next persistent collective on sh (its own range for
 * its whole life, never wrapped around), or -1 once every range kept for
 * them is taken: a count every rank has alike, so every rank then leaves
 * that collective to the MPI. */
int coll_shadow_ptag(struct coll_shadow *sh);

/* Frees the duplicates of freed communicators that no collective uses any
 * more: from the application's thread, outside any MPI callback (a graph
 * collective's start, a communicator's creation, MPI_Finalize), often
 * enough that a program that creates and frees communicators in a loop
 * does not run out of the MPI's context ids. */
void coll_shadow_reap(void);

#endif
