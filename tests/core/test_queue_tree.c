/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.queue_tree — the queue tree built from the topology
 * (HWLOC_SYNTHETIC topologies, so it does not depend on this machine):
 *  - "pack:2 core:4 pu:2": PIANO_QUEUE_LEVEL=core -> 11 queues (machine,
 *    2 packages, 8 cores), pu -> 27, package -> 3, machine -> 1;
 *  - "pack:1 core:2 pu:1", level pu: the package and PU levels have no
 *    siblings and are pruned -> 3 queues (machine + 2 cores);
 *  - root is queue 0 of type "Machine"; index/parent/depth/nchildren are
 *    consistent; each queue matches the hwloc object (type, logical index,
 *    cpuset); the children's cpusets partition the parent's;
 *  - piano_ltask_bind_queue()/piano_ltask_bind() put a task in the expected
 *    queue (smallest queue whose cpuset includes the set), the queue's
 *    `submitted` counter counts it, and piano_poll_all() runs it;
 *  - on the real topology: consistency, and an unbound task submitted by a
 *    thread bound to one PU goes to that PU's leaf queue (machine queue when
 *    the thread is unbound).
 */
#include "common.h"

#include <hwloc.h>

#define MAXQ 256

static struct piano_queue_info q[MAXQ];
static int nq;
static atomic_int runs;

static unsigned cb(void *arg)
{
	(void)arg;
	atomic_fetch_add(&runs, 1);
	return 1;
}

static void load_queues(const char *cfg)
{
	CHECK_OK(piano_queue_count(&nq));
	CHECK(nq >= 1 && nq <= MAXQ, "[%s] piano_queue_count = %d", cfg, nq);
	for (int i = 0; i < nq; i++) {
		memset(&q[i], 0, sizeof q[i]);
		CHECK_OK(piano_queue_info(i, &q[i]));
	}
}

static void print_queues(void)
{
	for (int i = 0; i < nq; i++)
		printf("    q%-3d parent %-3d depth %d nchildren %d %s L#%d cpuset %s submitted %llu\n",
		       q[i].index, q[i].parent, q[i].depth, q[i].nchildren,
		       q[i].type ? q[i].type : "(null)", q[i].logical_index, q[i].cpuset,
		       (unsigned long long)q[i].submitted);
}

static hwloc_bitmap_t parse_set(const char *cfg, int i)
{
	hwloc_bitmap_t s = hwloc_bitmap_alloc();
	CHECK(s != NULL, "hwloc_bitmap_alloc");
	CHECK(hwloc_bitmap_list_sscanf(s, q[i].cpuset) == 0,
	      "[%s] queue %d: cannot parse cpuset \"%s\"", cfg, i, q[i].cpuset);
	return s;
}

/*
 * Generic consistency. types[d] / nchildren[d]: expected type name and
 * number of children at depth d (NULL types: do not check).
 */
static void check_tree(const char *cfg, int expect_n, const char *const *types,
                       const int *nchildren)
{
	hwloc_topology_t topo;
	int count[MAXQ] = { 0 };
	int ndepth = 0;

	while (types && types[ndepth])
		ndepth++;

	load_queues(cfg);
	printf("  [%s] %d queues\n", cfg, nq);
	print_queues();
	if (expect_n > 0)
		CHECK(nq == expect_n, "[%s] %d queues, expected %d", cfg, nq, expect_n);
	CHECK_OK(piano_topology_get(&topo));

	CHECK(q[0].parent == -1 && q[0].depth == 0, "[%s] queue 0 is not the root", cfg);
	CHECK(q[0].type && strcmp(q[0].type, "Machine") == 0,
	      "[%s] queue 0 type \"%s\", expected \"Machine\"", cfg, q[0].type ? q[0].type : "");

	for (int i = 0; i < nq; i++) {
		CHECK(q[i].index == i, "[%s] queue %d reports index %d", cfg, i, q[i].index);
		CHECK(q[i].type != NULL, "[%s] queue %d has a NULL type", cfg, i);
		if (i > 0) {
			int p = q[i].parent;
			CHECK(p >= 0 && p < nq && p != i, "[%s] queue %d: parent %d", cfg, i, p);
			CHECK(q[i].depth == q[p].depth + 1,
			      "[%s] queue %d: depth %d, parent %d has depth %d", cfg, i,
			      q[i].depth, p, q[p].depth);
			count[p]++;
		}
		if (types)
			CHECK(q[i].depth >= 0 && q[i].depth < ndepth,
			      "[%s] queue %d has depth %d, expected < %d", cfg, i, q[i].depth,
			      ndepth);
		if (types)
			CHECK(strcmp(q[i].type, types[q[i].depth]) == 0,
			      "[%s] queue %d at depth %d has type \"%s\", expected \"%s\"", cfg,
			      i, q[i].depth, q[i].type, types[q[i].depth]);
		if (nchildren)
			CHECK(q[i].nchildren == nchildren[q[i].depth],
			      "[%s] queue %d (%s) has %d children, expected %d", cfg, i,
			      q[i].type, q[i].nchildren, nchildren[q[i].depth]);

		/* the queue matches its hwloc object */
		hwloc_obj_type_t ty;
		CHECK(hwloc_type_sscanf(q[i].type, &ty, NULL, 0) == 0,
		      "[%s] queue %d: unknown hwloc type \"%s\"", cfg, i, q[i].type);
		hwloc_obj_t obj = hwloc_get_obj_by_type(topo, ty, (unsigned)q[i].logical_index);
		CHECK(obj != NULL, "[%s] queue %d: no %s with logical index %d", cfg, i,
		      q[i].type, q[i].logical_index);
		char *str = NULL;
		hwloc_bitmap_list_asprintf(&str, obj->cpuset);
		CHECK(str && strncmp(str, q[i].cpuset, sizeof q[i].cpuset - 1) == 0,
		      "[%s] queue %d (%s L#%d): cpuset \"%s\", object cpuset \"%s\"", cfg, i,
		      q[i].type, q[i].logical_index, q[i].cpuset, str ? str : "");
		free(str);
		/* no two queues for the same object */
		for (int j = 0; j < i; j++)
			CHECK(strcmp(q[j].type, q[i].type) != 0 ||
			              q[j].logical_index != q[i].logical_index,
			      "[%s] queues %d and %d are both %s L#%d", cfg, j, i, q[i].type,
			      q[i].logical_index);
	}
	for (int i = 0; i < nq; i++)
		CHECK(q[i].nchildren == count[i],
		      "[%s] queue %d says %d children, %d queues name it as parent", cfg, i,
		      q[i].nchildren, count[i]);

	/* children partition the parent's cpuset */
	for (int p = 0; p < nq; p++) {
		if (q[p].nchildren == 0)
			continue;
		hwloc_bitmap_t ps = parse_set(cfg, p);
		hwloc_bitmap_t uni = hwloc_bitmap_alloc();
		for (int c = 0; c < nq; c++) {
			if (c == 0 || q[c].parent != p)
				continue;
			hwloc_bitmap_t cs = parse_set(cfg, c);
			CHECK(!hwloc_bitmap_iszero(cs), "[%s] queue %d has an empty cpuset", cfg, c);
			CHECK(!hwloc_bitmap_intersects(cs, uni),
			      "[%s] queue %d's cpuset %s overlaps a sibling's", cfg, c, q[c].cpuset);
			CHECK(hwloc_bitmap_isincluded(cs, ps),
			      "[%s] queue %d's cpuset %s is not inside its parent's %s", cfg, c,
			      q[c].cpuset, q[p].cpuset);
			hwloc_bitmap_or(uni, uni, cs);
			hwloc_bitmap_free(cs);
		}
		CHECK(hwloc_bitmap_isequal(uni, ps),
		      "[%s] the children of queue %d do not cover its cpuset %s", cfg, p,
		      q[p].cpuset);
		hwloc_bitmap_free(uni);
		hwloc_bitmap_free(ps);
	}
}

static int find_queue(const char *type, int logical)
{
	for (int i = 0; i < nq; i++)
		if (strcmp(q[i].type, type) == 0 && q[i].logical_index == logical)
			return i;
	FAIL("no queue for %s L#%d", type, logical);
}

static uint64_t submitted(int i)
{
	struct piano_queue_info info;
	CHECK_OK(piano_queue_info(i, &info));
	return info.submitted;
}

/* Submits t (already bound), checks its queue and counter, runs it. */
static void submit_bound(const char *what, piano_ltask_t *t, int expect_q)
{
	int got = -100;
	CHECK_OK(piano_ltask_queue(t, &got));
	CHECK(got == expect_q, "%s: piano_ltask_queue = %d, expected %d (%s L#%d)", what, got,
	      expect_q, q[expect_q].type, q[expect_q].logical_index);
	uint64_t before = submitted(expect_q);
	int r0 = atomic_load(&runs);
	CHECK_OK(piano_ltask_submit(t));
	uint64_t after = submitted(expect_q);
	CHECK(after == before + 1, "%s: queue %d submitted %llu -> %llu, expected +1", what,
	      expect_q, (unsigned long long)before, (unsigned long long)after);
	CHECK_OK(piano_ltask_queue(t, &got));
	CHECK(got == expect_q, "%s: after submit piano_ltask_queue = %d, expected %d", what, got,
	      expect_q);
	int rc = piano_poll_all();
	CHECK(rc >= 1, "%s: piano_poll_all() returned %d (%s), expected >= 1", what, rc,
	      test_errname(rc));
	CHECK_STATE(t, PIANO_LTASK_COMPLETED);
	CHECK_EQ(atomic_load(&runs), r0 + 1);
}

static void bind_set(piano_ltask_t *t, const char *list)
{
	hwloc_bitmap_t s = hwloc_bitmap_alloc();
	CHECK(hwloc_bitmap_list_sscanf(s, list) == 0, "bad list %s", list);
	CHECK_OK(piano_ltask_bind(t, s));
	hwloc_bitmap_free(s);
}

static void synthetic(const char *topo, const char *level, int expect_n,
                      const char *const *types, const int *nchildren)
{
	char cfg[128];
	snprintf(cfg, sizeof cfg, "%s / %s", topo, level);
	test_phase(cfg);
	test_clear_env();
	test_setenv("HWLOC_SYNTHETIC", topo);
	test_setenv("PIANO_PROGRESSION", "0");
	test_setenv("PIANO_QUEUE_LEVEL", level);
	CHECK_OK(piano_init());
	check_tree(cfg, expect_n, types, nchildren);
	CHECK_OK(piano_finalize());
}

static void bound_tasks(void)
{
	hwloc_topology_t topo;
	piano_ltask_t *t;
	int got;

	test_phase("bound tasks");
	test_clear_env();
	test_setenv("HWLOC_SYNTHETIC", "pack:2 core:4 pu:2");
	test_setenv("PIANO_PROGRESSION", "0");
	test_setenv("PIANO_QUEUE_LEVEL", "core");
	CHECK_OK(piano_init());
	load_queues("bound tasks");
	CHECK_OK(piano_topology_get(&topo));
	int q5 = find_queue("Core", 5);
	int p1 = find_queue("Package", 1);

	CHECK_OK(piano_ltask_create(cb, NULL, PIANO_LTASK_ONESHOT, &t));
	CHECK_OK(piano_ltask_queue(t, &got));
	CHECK(got == -1, "unbound task: piano_ltask_queue = %d before submit, expected -1", got);

	CHECK_OK(piano_ltask_bind_queue(t, q5));
	submit_bound("bind_queue(core 5)", t, q5);

	hwloc_obj_t core5 = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, 5);
	CHECK(core5 != NULL, "no core 5 in the synthetic topology");
	CHECK_OK(piano_ltask_bind(t, core5->cpuset));
	submit_bound("bind(cpuset of core 5)", t, q5);

	bind_set(t, "11"); /* one PU of core 5: no PU queues at level core */
	submit_bound("bind(PU 11)", t, q5);

	bind_set(t, "8,10"); /* cores 4 and 5, both in package 1 */
	submit_bound("bind(PUs 8,10)", t, p1);

	bind_set(t, "7-8"); /* across both packages */
	submit_bound("bind(PUs 7-8)", t, 0);

	CHECK_OK(piano_ltask_bind_queue(t, 0));
	submit_bound("bind_queue(0)", t, 0);

	CHECK_OK(piano_ltask_destroy(t));
	CHECK_OK(piano_finalize());
}

/* Threads on a synthetic topology: init works, bound tasks complete. */
static void synthetic_with_threads(void)
{
	piano_ltask_t *t;
	test_phase("synthetic topology with progression threads");
	test_clear_env();
	test_setenv("HWLOC_SYNTHETIC", "pack:2 core:4 pu:2");
	test_setenv("PIANO_QUEUE_LEVEL", "core");
	test_setenv("PIANO_IDLE_LEVEL", "package");
	test_setenv("PIANO_TIMER_PERIOD_US", "1000");
	CHECK_OK(piano_init());
	CHECK_EQ(test_thread_count(PIANO_POINT_IDLE), 2);
	load_queues("threads");
	int q5 = find_queue("Core", 5);
	int r0 = atomic_load(&runs);
	CHECK_OK(piano_ltask_create(cb, NULL, PIANO_LTASK_ONESHOT, &t));
	CHECK_OK(piano_ltask_bind_queue(t, q5));
	CHECK_OK(piano_ltask_submit(t));
	test_phase("waiting for a task bound to core 5 of a synthetic topology");
	CHECK_RC(piano_ltask_wait(t), 0);
	CHECK_EQ(atomic_load(&runs), r0 + 1);
	CHECK_OK(piano_ltask_destroy(t));
	CHECK_OK(piano_finalize());
}

/* Real topology: consistency and placement of unbound tasks. */
static void real_topology(void)
{
	hwloc_topology_t topo;
	piano_ltask_t *t;
	int got;

	test_phase("real topology");
	test_clear_env();
	test_setenv("PIANO_PROGRESSION", "0");
	test_setenv("PIANO_QUEUE_LEVEL", "pu");
	test_setenv("PIANO_LOCATION_REFRESH_US", "1");
	CHECK_OK(piano_init());
	check_tree("real / pu", -1, NULL, NULL);
	CHECK_OK(piano_topology_get(&topo));
	CHECK_OK(piano_ltask_create(cb, NULL, PIANO_LTASK_ONESHOT, &t));

	hwloc_bitmap_t mine = hwloc_bitmap_alloc();
	hwloc_obj_t root = hwloc_get_root_obj(topo);
	if (hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_THREAD) == 0 &&
	    hwloc_bitmap_isequal(mine, root->cpuset)) {
		CHECK_OK(piano_ltask_submit(t));
		CHECK_OK(piano_ltask_queue(t, &got));
		CHECK(got == 0, "unbound task from an unbound thread went to queue %d, expected 0",
		      got);
		CHECK(piano_poll_all() >= 1, "piano_poll_all did not run the task");
		CHECK_STATE(t, PIANO_LTASK_COMPLETED);
	} else {
		printf("  (this thread is bound: unbound-thread placement not checked)\n");
	}

	/* a thread bound to the last PU submits to that PU's leaf queue */
	int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)(npu - 1));
	if (nq > 1 && pu && hwloc_bitmap_isincluded(pu->cpuset, mine) &&
	    hwloc_set_cpubind(topo, pu->cpuset, HWLOC_CPUBIND_THREAD) == 0) {
		/* expected: the deepest queue whose cpuset includes the PU */
		int expect = 0;
		for (int i = 0; i < nq; i++) {
			hwloc_bitmap_t s = parse_set("real", i);
			if (hwloc_bitmap_isincluded(pu->cpuset, s) && q[i].depth > q[expect].depth)
				expect = i;
			hwloc_bitmap_free(s);
		}
		/* let the cached location expire (PIANO_LOCATION_REFRESH_US=1, but
		 * the engine may measure it with a coarse clock: wait many ticks) */
		test_sleep_us(50000);
		CHECK_OK(piano_ltask_submit(t));
		CHECK_OK(piano_ltask_queue(t, &got));
		CHECK(got == expect,
		      "unbound task from a thread bound to PU L#%u went to queue %d, expected %d",
		      pu->logical_index, got, expect);
		CHECK(piano_poll_all() >= 1, "piano_poll_all did not run the task");
		CHECK_STATE(t, PIANO_LTASK_COMPLETED);
		int local = -1;
		CHECK_OK(piano_queue_local(&local));
		CHECK(local == expect, "piano_queue_local = %d for a thread bound to PU L#%u, "
		      "expected %d", local, pu->logical_index, expect);
		hwloc_set_cpubind(topo, mine, HWLOC_CPUBIND_THREAD);
	} else {
		printf("  (single queue or cannot bind: bound-thread placement not checked)\n");
	}
	hwloc_bitmap_free(mine);
	CHECK_OK(piano_ltask_destroy(t));
	CHECK_OK(piano_finalize());
}

int main(void)
{
	test_watchdog(50);

	static const char *const t_core[] = { "Machine", "Package", "Core", NULL };
	static const int n_core[] = { 2, 4, 0 };
	synthetic("pack:2 core:4 pu:2", "core", 11, t_core, n_core);

	static const char *const t_pu[] = { "Machine", "Package", "Core", "PU", NULL };
	static const int n_pu[] = { 2, 4, 2, 0 };
	synthetic("pack:2 core:4 pu:2", "pu", 27, t_pu, n_pu);

	static const char *const t_pack[] = { "Machine", "Package", NULL };
	static const int n_pack[] = { 2, 0 };
	synthetic("pack:2 core:4 pu:2", "package", 3, t_pack, n_pack);

	static const char *const t_mach[] = { "Machine", NULL };
	static const int n_mach[] = { 0 };
	synthetic("pack:2 core:4 pu:2", "machine", 1, t_mach, n_mach);

	static const char *const t_pruned[] = { "Machine", "Core", NULL };
	static const int n_pruned[] = { 2, 0 };
	synthetic("pack:1 core:2 pu:1", "pu", 3, t_pruned, n_pruned);

	bound_tasks();
	synthetic_with_threads();
	real_topology();

	printf("queue_tree: ok\n");
	return TEST_PASS;
}
