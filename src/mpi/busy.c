/* SPDX-License-Identifier: BSD-3-Clause */
/* Busy-call detection (busy.h). */
#include "busy.h"

bool busy_call(struct busy_floor *f, uint64_t dt, uint64_t min_busy_ns)
{
	if (dt < f->min_cur)
		f->min_cur = dt;
	if (++f->n == BUSY_WINDOW) {
		f->min_prev = f->min_cur;
		f->min_cur = UINT64_MAX;
		f->n = 0;
	}
	uint64_t base = f->min_prev < f->min_cur ? f->min_prev : f->min_cur;
	uint64_t limit = base < UINT64_MAX / 4 ? 4 * base : UINT64_MAX;
	return dt > (limit > min_busy_ns ? limit : min_busy_ns);
}

uint64_t busy_threshold(uint64_t *v, int n)
{
	for (int i = 1; i < n; i++) /* insertion sort: n is tiny */
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint64_t x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	uint64_t t = 4 * v[n / 2];
	return t < 1000 ? 1000 : t;
}

bool busy_confirm(struct busy_pair *p, bool busy)
{
	bool twice = busy && p->last;
	p->last = busy;
	return twice;
}
