/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_mpi_table: the results, as an OSU-style table or as CSV (see
 * bench_mpi_common.h).
 */
#include "bench_mpi_common.h"

#include <math.h>
#include <string.h>

static int col_width(const struct bm_col *col)
{
	int w = col->width;
	int l = (int)strlen(col->name);
	if (w <= 0)
		w = l > 10 ? l : 10;
	return w < l ? l : w;
}

static void print_size(const char *sep, int w, int csv, long bytes)
{
	char buf[32] = "-";
	if (csv)
		snprintf(buf, sizeof buf, "%ld", bytes > 0 ? bytes : 0);
	else if (bytes > 0)
		bm_fmt_size(bytes, buf, sizeof buf);
	printf("%s%*s", sep, w, buf);
}

void bm_table_begin(struct bm_table *t, const struct bm_ctx *c, const struct bm_col *cols,
                    int ncols)
{
	t->c = c;
	t->cols = cols;
	t->ncols = ncols;
	if (c->rank != 0)
		return;
	if (c->opts.csv) {
		printf("bench,label,mpi");
		for (int i = 0; i < ncols; i++)
			printf(",%s", cols[i].csv ? cols[i].csv : cols[i].name);
	} else {
		printf("#");
		for (int i = 0; i < ncols; i++)
			printf(" %*s", col_width(&cols[i]), cols[i].name);
	}
	printf("\n");
	fflush(stdout);
}

void bm_table_row(const struct bm_table *t, ...)
{
	if (t->c->rank != 0)
		return;
	const int csv = t->c->opts.csv;
	va_list ap;
	va_start(ap, t);
	if (csv)
		printf("%s,%s,%s", t->c->bench, t->c->opts.label, t->c->mpi_name);
	else
		printf(" ");
	for (int i = 0; i < t->ncols; i++) {
		const struct bm_col *col = &t->cols[i];
		int w = csv ? 0 : col_width(col);
		const char *sep = csv ? "," : " ";
		switch (col->type) {
		case BM_COL_STR:
			printf("%s%*s", sep, w, va_arg(ap, const char *));
			break;
		case BM_COL_INT:
			printf("%s%*ld", sep, w, va_arg(ap, long));
			break;
		case BM_COL_F2:
		case BM_COL_F4: {
			double v = va_arg(ap, double);
			int prec = csv && col->type == BM_COL_F4 ? 4 : 2;
			if (isnan(v))
				printf("%s%*s", sep, w, csv ? "" : "-");
			else
				printf("%s%*.*f", sep, w, prec, v);
			break;
		}
		case BM_COL_SIZE:
			print_size(sep, w, csv, va_arg(ap, long));
			break;
		}
	}
	va_end(ap);
	printf("\n");
	fflush(stdout);
}
