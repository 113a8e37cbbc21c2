/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Submission offload (offload.h): eager-size MPI_Isend calls queued and
 * posted by an ltask, so that an idle core makes the MPI's send (over TCP a
 * send() system call of several microseconds) while the application goes
 * on.
 *
 * A record's protocol: `state` moves QUEUED -> POSTED or DONE, only under
 * queue_lock and by whoever posts; every other field the poster writes is
 * published by the release store of `state`. Readers load it with acquire
 * and, when they find QUEUED, take queue_lock (posting the queue
 * themselves), after which it is final. Once POSTED, R belongs to the
 * application's completion calls alone; DONE means the poster completed G
 * (R finished at once, or posting failed, or the send was cancelled while
 * queued) and G is an ordinary completed request. A record lives until G is
 * freed (its free function), which only the application's calls on G do.
 *
 * Whether to offload is decided from what the process observes. A send
 * posted 10 us or more after it was queued, by the application or by the
 * timer, is late: no idle core took it in time. A window of sends
 * (OFFLOAD_WINDOW) all late means no core is idle: offload is off for the
 * process for a run of sends, which doubles while the retries find no
 * idle core either (OFFLOAD_MISS_RUN_*). Sends the application posted
 * itself sooner (prompt: its next call came at once, there was nothing to
 * overlap) say nothing about the cores and stay out of the window; a row
 * of them turns offload off for a run that does not grow. Sends to one
 * peer that cost less to post than to offload (cheap: shared memory) turn
 * it off for that peer (struct peer). Then it tries again.
 */
#include "offload.h"
#include "gate.h"
#include "reqtab.h"
#include "starve.h"
#include "sys.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { OS_QUEUED, OS_POSTED, OS_DONE };

/* Cheap posts to one peer in a row that turn offload off for it, for a
 * run of sends. A post that costs less than OFFLOAD_CHEAP_NS (shared
 * memory: 0.05-0.6 us) is not worth the record, the generalized request
 * and the locks offloading costs the application (~0.3-0.5 us). */
#define OFFLOAD_CHEAP_LIMIT 64
#define OFFLOAD_CHEAP_NS 1000
#define OFFLOAD_DIRECT_RUN 4096
/* A send is late once it waited this long in the queue. An idle thread
 * posts it within 8 us (a SCHED_IDLE thread woken on an idle core: 0-8 us
 * measured in bench_offload over TCP); when it does not, it is absent for
 * far longer (the application then posts the send in its next call), so
 * the bound need not be tight. The application's own post before it only
 * says that its next call came before the engine could react. */
#define OFFLOAD_LATE_NS 10000
/* A window of sends, none of them prompt, all late turns offload off for
 * a run. Not fewer: a late send costs the application only the
 * bookkeeping (~0.4 us) beyond a direct one, and one posted in time saves
 * it the post (4-6 us over TCP), so a core that another rank takes in
 * bursts still pays (bench_offload with the receiver on it: a third of
 * the sends late, in clusters). OFFLOAD_PROMPT_LIMIT prompt sends in a row
 * turn it off for OFFLOAD_PROMPT_RUN sends, a run that does not grow. */
#define OFFLOAD_WINDOW 16
#define OFFLOAD_PROMPT_LIMIT 8
#define OFFLOAD_PROMPT_RUN 256
/* The run of direct sends after a late window starts short, so that a
 * burst of load does not keep offload off through the next phase, and
 * doubles while every retry finds no idle core either. */
#define OFFLOAD_MISS_RUN_MIN 32
#define OFFLOAD_MISS_RUN_MAX 8192

struct osend {
	MPI_Request g; /* the application's handle */
	MPI_Request r; /* the MPI's send, once posted */
	_Atomic int state;
	const void *buf;
	MPI_Count count;
	MPI_Datatype dt;
	int dest, tag;
	MPI_Comm comm;
	bool large;        /* the _c form */
	uint64_t queued;   /* sys_now_ns() when queued */
	int err;           /* DONE: the post's error, MPI_SUCCESS otherwise */
	MPI_Status status; /* DONE: what G's query function returns */
	struct osend *next;
};

/* The queue, in call order. */
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static struct osend *head, **tail = &head;   /* under queue_lock */
_Atomic long offload_queued_n;               /* changed under queue_lock */
/* The policy's state, under queue_lock: the window's sends and late ones,
 * prompt ones in a row, the next run after a late window. */
static unsigned win_n, win_late, prompts;
static long miss_run = OFFLOAD_MISS_RUN_MIN;

/* What posting to a peer (communicator, rank) costs, in a small table
 * indexed by a hash of the pair; two pairs that share a slot share its
 * verdict until one of them takes it over. A heuristic: relaxed atomics,
 * written by the posters (under queue_lock), read by MPI_Isend. */
#define PEER_SLOTS 256
struct peer {
	_Atomic uint64_t key;
	_Atomic unsigned cheap;   /* consecutive cheap posts */
	_Atomic long direct_left; /* sends to post directly before trying again */
};
static struct peer peers[PEER_SLOTS];

/* G -> record, for the application's calls on G. */
static pthread_mutex_t tab_lock = PTHREAD_MUTEX_INITIALIZER;
static struct reqtab tab; /* under tab_lock */
_Atomic long offload_live_n;

/* Set by offload_setup() before the layer is ready, read-only afterwards
 * (offload_shutdown() clears offload_enabled at finalization):
 * offload_enabled is PIANO_OFFLOAD's choice (0, 1, 2 = always). */
int offload_enabled;
static int tag_ub;
static piano_ltask_t *task;

static _Atomic int task_active, stopping;
static _Atomic long direct_left;
static _Atomic uint64_t n_deferred, n_engine, n_app, n_late, n_direct;
static _Atomic uint64_t n_off_late, n_off_prompt, n_off_cheap; /* direct runs begun */
static uint64_t idle_since; /* owned by the task */

static uint64_t key_of(MPI_Request r)
{
	uint64_t k = 0;
	memcpy(&k, &r, sizeof(r) < sizeof(k) ? sizeof(r) : sizeof(k));
	return k;
}

static uint64_t peer_key(MPI_Comm comm, int dest)
{
	uint64_t c = 0;
	memcpy(&c, &comm, sizeof(comm) < sizeof(c) ? sizeof(comm) : sizeof(c));
	return (c * 0x9e3779b97f4a7c15ull) ^ (uint64_t)(unsigned)dest;
}

static struct peer *peer_of(uint64_t key) { return &peers[(key ^ (key >> 29)) % PEER_SLOTS]; }

/* A post to the peer took ns (the engine's posts only: the application's
 * are timed by nobody). */
static void peer_posted(struct osend *o, uint64_t ns)
{
	uint64_t key = peer_key(o->comm, o->dest);
	struct peer *p = peer_of(key);
	if (atomic_load_explicit(&p->key, memory_order_relaxed) != key) {
		atomic_store_explicit(&p->key, key, memory_order_relaxed);
		atomic_store_explicit(&p->cheap, 0, memory_order_relaxed);
		atomic_store_explicit(&p->direct_left, 0, memory_order_relaxed);
	}
	unsigned c = ns < OFFLOAD_CHEAP_NS
	                     ? atomic_load_explicit(&p->cheap, memory_order_relaxed) + 1
	                     : 0;
	if (c >= OFFLOAD_CHEAP_LIMIT && offload_enabled == 1) {
		atomic_store_explicit(&p->direct_left, OFFLOAD_DIRECT_RUN, memory_order_relaxed);
		atomic_fetch_add_explicit(&n_off_cheap, 1, memory_order_relaxed);
		c = 0;
	}
	atomic_store_explicit(&p->cheap, c, memory_order_relaxed);
}

/* Whether a send to the peer goes directly: the peer's posts are cheap. */
static bool peer_direct(MPI_Comm comm, int dest)
{
	uint64_t key = peer_key(comm, dest);
	struct peer *p = peer_of(key);
	if (atomic_load_explicit(&p->key, memory_order_relaxed) != key ||
	    atomic_load_explicit(&p->direct_left, memory_order_relaxed) <= 0)
		return false;
	atomic_fetch_sub_explicit(&p->direct_left, 1, memory_order_relaxed);
	return true;
}

static struct osend *record_of(MPI_Request g)
{
	if (g == MPI_REQUEST_NULL || !atomic_load_explicit(&offload_live_n, memory_order_relaxed))
		return NULL;
	pthread_mutex_lock(&tab_lock);
	struct reqtab_entry *e = reqtab_find(&tab, key_of(g));
	struct osend *o = e ? e->data : NULL;
	pthread_mutex_unlock(&tab_lock);
	return o;
}

/* ------------------------------------------------ the generalized request */

static int query_fn(void *extra, MPI_Status *status)
{
	struct osend *o = extra;
	*status = o->status;
	return o->err;
}

/* Called by the MPI when G is freed: the record goes with it. */
static int free_fn(void *extra)
{
	struct osend *o = extra;
	pthread_mutex_lock(&tab_lock);
	struct reqtab_entry *e = reqtab_find(&tab, key_of(o->g));
	if (e && e->data == o) {
		reqtab_erase(&tab, e);
		atomic_fetch_sub_explicit(&offload_live_n, 1, memory_order_relaxed);
		pmpi_watch_add(-1);
	}
	pthread_mutex_unlock(&tab_lock);
	free(o);
	return MPI_SUCCESS;
}

/* MPI_Cancel on G goes through offload_cancel(); the MPI's own call on it
 * (a path piano does not intercept) can only be told it is too late. */
static int cancel_fn(void *extra, int complete)
{
	(void)extra;
	(void)complete;
	return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- posting */

static int post(struct osend *o)
{
#if MPI_VERSION >= 4
	if (o->large)
		return PMPI_Isend_c(o->buf, o->count, o->dt, o->dest, o->tag, o->comm, &o->r);
#endif
	return PMPI_Isend(o->buf, (int)o->count, o->dt, o->dest, o->tag, o->comm, &o->r);
}

/* A send left the queue (under queue_lock). */
static void queue_sub(void)
{
	atomic_fetch_sub_explicit(&offload_queued_n, 1, memory_order_release);
}

/* Done without R: G completed with this status, then the state published. */
static void finish(struct osend *o)
{
	PMPI_Grequest_complete(o->g);
	atomic_store_explicit(&o->state, OS_DONE, memory_order_release);
}

/* Posts the whole queue, in order (under queue_lock). The engine also tests
 * each send once: an eager one is often complete at once, and its G is then
 * completed here rather than by the application's completion call. */
static unsigned post_all(bool engine)
{
	unsigned n = 0;
	/* Lateness counts to when the queue was reached, not to each post:
	 * the posts of a burst before it take their time. */
	uint64_t reached = sys_now_ns(), t0 = reached;
	for (struct osend *o; (o = head) != NULL; n++) {
		head = o->next;
		if (!head)
			tail = &head;
		if (engine)
			t0 = sys_now_ns();
		int rc = post(o), flag = 0;
		bool late = reached - o->queued >= OFFLOAD_LATE_NS;
		if (engine) {
			peer_posted(o, sys_now_ns() - t0);
			atomic_fetch_add_explicit(&n_engine, 1, memory_order_relaxed);
		} else {
			atomic_fetch_add_explicit(&n_app, 1, memory_order_relaxed);
		}
		if (late)
			atomic_fetch_add_explicit(&n_late, 1, memory_order_relaxed);
		if (engine || late) {
			prompts = 0;
			win_n++;
			win_late += late;
		} else {
			prompts++;
		}
		if (rc == MPI_SUCCESS && engine)
			PMPI_Test(&o->r, &flag, &o->status);
		queue_sub();
		if (rc != MPI_SUCCESS) {
			o->err = rc;
			o->status.MPI_ERROR = rc;
			finish(o);
		} else if (flag) {
			finish(o);
		} else {
			atomic_store_explicit(&o->state, OS_POSTED, memory_order_release);
		}
	}
	if (offload_enabled == 1 && win_n >= OFFLOAD_WINDOW) {
		if (win_late >= win_n) {
			/* Not one taken in time: no core is idle. */
			atomic_store_explicit(&direct_left, miss_run, memory_order_relaxed);
			atomic_fetch_add_explicit(&n_off_late, 1, memory_order_relaxed);
			if (miss_run < OFFLOAD_MISS_RUN_MAX)
				miss_run *= 2;
		} else {
			miss_run = OFFLOAD_MISS_RUN_MIN;
		}
		win_n = win_late = 0;
	} else if (offload_enabled == 1 && prompts >= OFFLOAD_PROMPT_LIMIT) {
		prompts = 0;
		atomic_store_explicit(&direct_left, OFFLOAD_PROMPT_RUN, memory_order_relaxed);
		atomic_fetch_add_explicit(&n_off_prompt, 1, memory_order_relaxed);
	}
	return n;
}

void offload_flush_slow(void)
{
	/* The lock may be held by the engine's poster: at SCHED_IDLE, it may
	 * have lost its CPU to this very thread; raise it for its call. */
	if (pthread_mutex_trylock(&queue_lock) != 0) {
		starve_relieve();
		pthread_mutex_lock(&queue_lock);
	}
	post_all(false);
	pthread_mutex_unlock(&queue_lock);
}

/* The ltask: posts what is queued, lingers a little when nothing is (as
 * the progress task does, progress.c), then completes; task_active is the
 * hand-over flag with offload_kick() (seq_cst on both sides). */
static unsigned offload_fn(void *arg)
{
	(void)arg;
	unsigned work = 0;
	/* Never wait for the lock: an application thread holding it is
	 * posting the queue itself. The gate: on Open MPI the application's
	 * file calls must not run beside another thread's MPI calls. */
	if (atomic_load(&offload_queued_n) && gate_enter()) {
		if (pthread_mutex_trylock(&queue_lock) == 0) {
			/* Marked as a call at SCHED_IDLE that a waiting
			 * application thread raises (starve.h). */
			bool raised = starve_raise();
			struct poker *me = starve_begin();
			work = post_all(true);
			starve_end(me);
			starve_lower(raised);
			pthread_mutex_unlock(&queue_lock);
		}
		gate_leave();
	}
	if (!atomic_load(&stopping)) {
		if (work || atomic_load(&offload_queued_n)) {
			idle_since = 0;
			return work;
		}
		if (pmpi_linger(&idle_since))
			return work;
	}
	idle_since = 0;
	atomic_store(&task_active, 0);
	if (!atomic_load(&stopping) && atomic_load(&offload_queued_n) &&
	    !atomic_exchange(&task_active, 1))
		return work;
	piano_timer_release(0);
	piano_ltask_complete(piano_ltask_current());
	return work;
}

/* The timer is held from the submission to the completion of the task, not
 * per queued send: a queued send needs the engine even when every core
 * computes (the timer then posts it), but arming and disarming the timer
 * costs a system call each, the very cost offload removes from MPI_Isend;
 * per burst of sends it is paid once. */
static void offload_kick(void)
{
	if (atomic_exchange(&task_active, 1))
		return;
	piano_timer_hold(0);
	int rc;
	while ((rc = piano_ltask_submit(task)) == PIANO_EBUSY)
		sys_yield();
	if (rc) {
		piano_timer_release(0);
		pmpi_warn("cannot submit the offload task: %s (queued sends are posted by the "
		          "application's next MPI call)",
		          piano_strerror(rc));
	}
}

/* ------------------------------------------------------ the calls' side */

static bool valid_dest(MPI_Comm comm, int dest)
{
	int inter = 0, size = 0;
	if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
		return false;
	if ((inter ? PMPI_Comm_remote_size(comm, &size) : PMPI_Comm_size(comm, &size)) !=
	    MPI_SUCCESS)
		return false;
	return dest >= 0 && dest < size;
}

bool offload_isend_slow(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                        MPI_Comm comm, bool large, MPI_Request *req)
{
	if (piano_ltask_current())
		return false;
	/* Anything the MPI would reject is left to it, so that the error is
	 * raised by the application's call, in its thread. */
	long bytes;
	if (comm == MPI_COMM_NULL || dt == MPI_DATATYPE_NULL || count < 0 || tag < 0 ||
	    tag > tag_ub || dest == MPI_PROC_NULL || pmpi_type_bytes(count, dt, &bytes) ||
	    bytes > pmpi_g.eager_limit)
		return false;
	if (atomic_load_explicit(&direct_left, memory_order_relaxed) > 0) {
		atomic_fetch_sub_explicit(&direct_left, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&n_direct, 1, memory_order_relaxed);
		return false;
	}
	if (peer_direct(comm, dest)) {
		atomic_fetch_add_explicit(&n_direct, 1, memory_order_relaxed);
		return false;
	}
	if (!valid_dest(comm, dest))
		return false;
	struct osend *o = calloc(1, sizeof(*o));
	if (!o)
		return false;
	*o = (struct osend){ .g = MPI_REQUEST_NULL,
		             .r = MPI_REQUEST_NULL,
		             .buf = buf,
		             .count = count,
		             .dt = dt,
		             .dest = dest,
		             .tag = tag,
		             .comm = comm,
		             .large = large,
		             .queued = sys_now_ns(),
		             .err = MPI_SUCCESS };
	atomic_init(&o->state, OS_QUEUED);
	if (PMPI_Grequest_start(query_fn, free_fn, cancel_fn, o, &o->g) != MPI_SUCCESS) {
		free(o);
		return false;
	}
	pthread_mutex_lock(&tab_lock);
	bool created;
	struct reqtab_entry *e = reqtab_get(&tab, key_of(o->g), &created);
	if (e) {
		e->data = o;
		atomic_fetch_add_explicit(&offload_live_n, 1, memory_order_relaxed);
		pmpi_watch_add(1);
	}
	pthread_mutex_unlock(&tab_lock);
	if (!e) { /* out of memory: the send is made at once */
		MPI_Request g = o->g;
		PMPI_Grequest_complete(g);
		PMPI_Request_free(&g); /* frees o */
		return false;
	}
	pthread_mutex_lock(&queue_lock);
	*tail = o;
	tail = &o->next;
	atomic_fetch_add_explicit(&offload_queued_n, 1, memory_order_relaxed);
	pthread_mutex_unlock(&queue_lock);
	atomic_fetch_add_explicit(&n_deferred, 1, memory_order_relaxed);
	*req = o->g;
	gate_app_busy(); /* the task's calls need the gate on */
	offload_kick();
	return true;
}

/* The record's final state: after taking queue_lock when still queued. */
static int settled(struct osend *o)
{
	int s = atomic_load_explicit(&o->state, memory_order_acquire);
	if (s == OS_QUEUED) {
		offload_flush_slow();
		s = atomic_load_explicit(&o->state, memory_order_acquire);
	}
	return s;
}

/* R completed in the application's call: G follows it and is freed. */
static void release(struct osend *o)
{
	MPI_Request g = o->g;
	PMPI_Grequest_complete(g);
	PMPI_Request_free(&g); /* frees o (free_fn) */
}

MPI_Request *offload_swap_slow(MPI_Request *reqs, int n, struct offload_swap *s)
{
	s->n = n;
	void **recs = n <= 16 ? s->small_recs : calloc((size_t)n, sizeof(void *));
	if (!recs) {
		/* Without the map the call waits on G, which nobody completes
		 * once R is posted: post and finish what can be first. */
		pmpi_warn("out of memory in a completion call on %d requests", n);
		offload_flush();
		return reqs;
	}
	bool any = false;
	for (int i = 0; i < n; i++) {
		struct osend *o = record_of(reqs[i]);
		recs[i] = o && settled(o) == OS_POSTED ? o : NULL;
		any |= recs[i] != NULL;
	}
	if (!any) {
		if (recs != s->small_recs)
			free(recs);
		return reqs;
	}
	MPI_Request *use = n <= 16 ? s->small : malloc((size_t)n * sizeof(MPI_Request));
	if (!use) {
		pmpi_warn("out of memory in a completion call on %d requests", n);
		if (recs != s->small_recs)
			free(recs);
		return reqs;
	}
	for (int i = 0; i < n; i++)
		use[i] = recs[i] ? ((struct osend *)recs[i])->r : reqs[i];
	s->use = use;
	s->recs = recs;
	return use;
}

void offload_unswap_slow(struct offload_swap *s, MPI_Request *reqs)
{
	for (int i = 0; i < s->n; i++) {
		struct osend *o = s->recs[i];
		if (!o) {
			reqs[i] = s->use[i];
		} else if (s->use[i] == MPI_REQUEST_NULL) {
			release(o);
			reqs[i] = MPI_REQUEST_NULL;
		}
	}
	if (s->use != s->small)
		free(s->use);
	if (s->recs != s->small_recs)
		free(s->recs);
	s->recs = NULL;
}

bool offload_free(MPI_Request *req, int *rc)
{
	struct osend *o = record_of(*req);
	if (!o)
		return false;
	if (settled(o) == OS_POSTED) {
		*rc = PMPI_Request_free(&o->r);
		release(o);
		*req = MPI_REQUEST_NULL;
	} else {
		*rc = PMPI_Request_free(req);
	}
	return true;
}

bool offload_cancel(MPI_Request req, int *rc)
{
	struct osend *o = record_of(req);
	if (!o)
		return false;
	*rc = MPI_SUCCESS;
	pthread_mutex_lock(&queue_lock);
	if (atomic_load_explicit(&o->state, memory_order_relaxed) == OS_QUEUED) {
		struct osend **p = &head;
		while (*p != o)
			p = &(*p)->next;
		*p = o->next;
		if (tail == &o->next)
			tail = p;
		queue_sub();
		/* Nothing was sent: the status says cancelled, as the MPI's
		 * own would for a send it could still withdraw. */
		PMPI_Status_set_cancelled(&o->status, 1);
		PMPI_Status_set_elements(&o->status, MPI_BYTE, 0);
		o->status.MPI_SOURCE = MPI_ANY_SOURCE;
		o->status.MPI_TAG = MPI_ANY_TAG;
		o->status.MPI_ERROR = MPI_SUCCESS;
		finish(o);
		pthread_mutex_unlock(&queue_lock);
		return true;
	}
	pthread_mutex_unlock(&queue_lock);
	if (atomic_load_explicit(&o->state, memory_order_acquire) == OS_POSTED)
		*rc = PMPI_Cancel(&o->r);
	return true; /* DONE: completed already, nothing to cancel */
}

bool offload_get_status(MPI_Request req, int *flag, MPI_Status *status, int *rc)
{
	struct osend *o = record_of(req);
	if (!o || settled(o) != OS_POSTED)
		return false; /* DONE: G's own status */
	*rc = PMPI_Request_get_status(o->r, flag, status);
	return true;
}

void offload_stats(struct offload_stats *out)
{
	out->deferred = atomic_load(&n_deferred);
	out->by_engine = atomic_load(&n_engine);
	out->by_app = atomic_load(&n_app);
	out->late = atomic_load(&n_late);
	out->off_late = atomic_load(&n_off_late);
	out->off_prompt = atomic_load(&n_off_prompt);
	out->off_cheap = atomic_load(&n_off_cheap);
	out->direct = atomic_load(&n_direct);
}

/* ---------------------------------------------------------------- set-up */

int offload_setup(void)
{
	long choice = pmpi_setting("PIANO_OFFLOAD", NULL);
	if (!choice)
		return 0;
	if (!pmpi_g.threaded) {
		pmpi_warn("PIANO_OFFLOAD needs background progress, which is off: sends are "
		          "posted by the application's calls");
		return 0;
	}
	/* Never in serialized mode: PIANO_OFFLOAD keeps the MPI at
	 * MPI_THREAD_MULTIPLE (serial_wanted, init.c), since the engine posts
	 * sends while the application may be in the MPI. */
	int *ub = NULL, flag = 0;
	PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
	tag_ub = flag && ub ? *ub : 32767;
	int rc = piano_ltask_create(offload_fn, NULL, PIANO_LTASK_REPEAT, &task);
	if (rc)
		return rc;
	piano_ltask_set_name(task, "mpi-offload");
	offload_enabled = (int)choice;
	return 0;
}

void offload_shutdown(void)
{
	if (!task)
		return;
	offload_flush();
	atomic_store(&stopping, 1);
	if (piano_ltask_state(task) != PIANO_LTASK_INIT)
		piano_ltask_wait(task);
	piano_ltask_destroy(task);
	task = NULL;
	offload_enabled = 0;
	/* Sends the application never completed: their G complete, so that
	 * the MPI's finalization finds no generalized request pending. */
	pthread_mutex_lock(&tab_lock);
	for (size_t i = 0; i < tab.cap; i++) {
		struct osend *o = tab.slots[i].used ? tab.slots[i].data : NULL;
		if (o && atomic_load(&o->state) == OS_POSTED)
			PMPI_Grequest_complete(o->g);
	}
	pthread_mutex_unlock(&tab_lock);
}
