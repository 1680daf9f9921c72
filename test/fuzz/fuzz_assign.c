/*
 * libFuzzer target: placing a gang's tasks on its allocation (placement_assign
 * and placement_gres_share in bridge/placement.c).  Four bytes give nmembers
 * and, signed, cpus_per_task, per_node and gpus_per_task; the rest is the
 * layout, [{node, cpus, gres}] as slurm.c builds it, gres being Slurm's
 * detail string such as "gpu:a100:4(IDX:0,2-3)".  Besides not crashing or
 * leaking, the header comment's contract: tasks fill the layout's nodes in
 * order, per_node or cpus / cpus_per_task to a node; it fails, with every
 * share freed, exactly when the layout holds fewer tasks; and task k on a
 * node gets the k-th run of gpus_per_task of that node's GPU indices.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s.h"
#include "xmalloc.h"
#include "placement.h"

#define FZ_MAX_INPUT (64 * 1024)
#define FZ_MAX_IDS   1024 /* placement_gres_share's limit */

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* A GRES detail this target understands on its own. */
struct fz_detail {
	char   name[128]; /* "gpu" or "gpu:a100" */
	long   ids[FZ_MAX_IDS];
	size_t n;
};

static void
fz_fail(const char *what, const char *a, const char *b)
{
	fprintf(stderr, "fuzz_assign: %s: %s %s\n", what,
	    a != NULL ? a : "(null)", b != NULL ? b : "(null)");
	abort();
}

/* A plain decimal: digits only, in range; the end, or NULL. */
static const char *
fz_num(const char *p, long *out)
{
	char *end;

	if (!isdigit((unsigned char)*p))
		return (NULL);
	errno = 0;
	*out = strtol(p, &end, 10);
	return (errno != 0 ? NULL : end);
}

/*
 * Expands "a,b-c,...)" into ids: plain numbers, ascending ranges, at most
 * FZ_MAX_IDS in all.  Returns the end (past the ')') or NULL.
 */
static const char *
fz_list(const char *p, long *ids, size_t *n)
{
	long a, b;

	*n = 0;
	for (;;) {
		if ((p = fz_num(p, &a)) == NULL)
			return (NULL);
		b = a;
		if (*p == '-' && ((p = fz_num(p + 1, &b)) == NULL || b < a))
			return (NULL);
		for (;;) {
			if (*n == FZ_MAX_IDS)
				return (NULL);
			ids[(*n)++] = a;
			if (a == b)
				break;
			a++;
		}
		if (*p == ')')
			return (p + 1);
		if (*p++ != ',')
			return (NULL);
	}
}

/*
 * Parses the common form NAME[:TYPE]:COUNT(IDX:LIST) (anything after the
 * ')' ignored); -1 for every other string.
 */
static int
fz_detail_parse(const char *s, struct fz_detail *d)
{
	const char *idx, *p, *colon = NULL;

	if (s == NULL || (idx = strstr(s, "(IDX:")) == NULL)
		return (-1);
	for (p = s; p < idx; p++) {
		if (*p == ':')
			colon = p;
		else if (!isalnum((unsigned char)*p) && *p != '_' &&
		    *p != '-' && *p != '.')
			return (-1);
	}
	if (colon == NULL || (size_t)(colon - s) >= sizeof(d->name))
		return (-1);
	memcpy(d->name, s, colon - s);
	d->name[colon - s] = '\0';
	if (fz_list(idx + 5, d->ids, &d->n) == NULL)
		return (-1);
	return (0);
}

/*
 * A share handed out must be "NAME:g(IDX:LIST)" with g indices; from a
 * detail this target parsed, its name and the k-th run of g indices.
 */
static void
fz_share_check(const char *share, int g, const struct fz_detail *want, size_t k)
{
	struct fz_detail got;
	const char	*idx, *colon, *end;
	char		 count[16];
	size_t		 i;

	if ((idx = strstr(share, "(IDX:")) == NULL)
		fz_fail("share without indices", share, NULL);
	for (colon = idx; colon > share && colon[-1] != ':'; colon--)
		;
	snprintf(count, sizeof(count), "%d", g);
	if (colon == share || (size_t)(idx - colon) != strlen(count) ||
	    strncmp(colon, count, strlen(count)) != 0)
		fz_fail("share has the wrong count", share, count);
	if ((end = fz_list(idx + 5, got.ids, &got.n)) == NULL || *end != '\0' ||
	    got.n != (size_t)g)
		fz_fail("share has a bad index list", share, count);
	if (want == NULL)
		return;
	if (strlen(want->name) != (size_t)(colon - 1 - share) ||
	    strncmp(share, want->name, strlen(want->name)) != 0)
		fz_fail("share names another GRES", share, want->name);
	for (i = 0; i < got.n; i++)
		if (got.ids[i] != want->ids[k * (size_t)g + i])
			fz_fail("share has the wrong indices", share, NULL);
}

/* Tasks the entry holds, per the header; -1 if it cannot be modelled. */
static long long
fz_slots(const json_t *ent, int cpus_per_task, int per_node)
{
	json_int_t cpus;

	cpus = json_integer_value(json_object_get(ent, "cpus"));
	if (per_node > 0)
		return (per_node);
	/* slurm.c's cpus is an int; larger does not come from Slurm. */
	if (cpus > INT_MAX || cpus < INT_MIN)
		return (-1);
	cpus /= cpus_per_task > 0 ? cpus_per_task : 1;
	return (cpus > 0 ? cpus : 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct assignment *out;
	struct fz_detail   d;
	const json_t	  *ent;
	const char	  *node, *gres;
	json_t		  *layout;
	size_t		   nmembers, i, j, m, k;
	long long	   slots, total = 0;
	char		   err[256], want[256];
	int		   cpt, per_node, gpt, rc, parsed;
	int		   named = 1, model = 1;

	if (size < 4 || size > FZ_MAX_INPUT)
		return (0);
	nmembers = data[0];
	/* Signed on purpose: the fuzzer tries negative counts too. */
	cpt = (int)(int8_t)data[1];
	per_node = (int)(int8_t)data[2];
	gpt = (int)(int8_t)data[3];
	if ((layout = json_loadb((const char *)data + 4, size - 4, 0, NULL)) ==
	    NULL)
		return (0);
	json_array_foreach (layout, i, ent) {
		if (json_string_value(json_object_get(ent, "node")) == NULL)
			named = 0;
		if ((slots = fz_slots(ent, cpt, per_node)) == -1)
			model = 0;
		else
			total += slots;
	}

	out = xcalloc(nmembers > 0 ? nmembers : 1, sizeof(*out));
	err[0] = '\0';
	rc = placement_assign(layout, nmembers, cpt, per_node, gpt, out, err,
	    sizeof(err));
	if (rc == -1) {
		if (err[0] == '\0')
			fz_fail("failed without a message", NULL, NULL);
		for (i = 0; i < nmembers; i++)
			if (out[i].gres != NULL)
				fz_fail("failed but left a share", out[i].gres,
				    err);
	} else if (rc != 0)
		fz_fail("bad return", NULL, NULL);
	if (model && rc != (named && total >= (long long)nmembers ? 0 : -1))
		fz_fail("wrong outcome", rc == 0 ? "succeeded" : err, NULL);

	/* Walk the layout as the header says: in order, slots per node. */
	for (m = 0, j = 0; rc == 0 && model && m < nmembers; j++) {
		ent = json_array_get(layout, j);
		node = json_string_value(json_object_get(ent, "node"));
		gres = json_string_value(json_object_get(ent, "gres"));
		slots = fz_slots(ent, cpt, per_node);
		parsed = fz_detail_parse(gres, &d) == 0;
		snprintf(want, sizeof(want), "%s", node);
		for (k = 0; (long long)k < slots && m < nmembers; k++, m++) {
			if (strcmp(out[m].node, want) != 0)
				fz_fail("task on the wrong node", out[m].node,
				    want);
			if (gpt <= 0) {
				if (out[m].gres != NULL)
					fz_fail("share without GPUs",
					    out[m].gres, NULL);
				continue;
			}
			if (parsed && (k + 1) * (size_t)gpt <= d.n &&
			    out[m].gres == NULL)
				fz_fail("no share from a detail that holds it",
				    gres, NULL);
			if (parsed && (k + 1) * (size_t)gpt > d.n &&
			    out[m].gres != NULL)
				fz_fail("a share beyond the detail", gres,
				    out[m].gres);
			if (out[m].gres != NULL)
				fz_share_check(out[m].gres, gpt,
				    parsed ? &d : NULL, k);
		}
	}
	for (i = 0; i < nmembers; i++)
		free(out[i].gres);
	free(out);
	json_decref(layout);
	return (0);
}
