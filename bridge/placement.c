/*
 * Placement: which member of a gang goes to which node of its allocation,
 * and each task's share of a node's GRES.  Pure; the reconcile thread runs
 * it when an allocation is granted.
 *
 * Threads: reconcile.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "placement.h"
#include "xmalloc.h"

/*
 * Splits a node's GRES detail ("gpu:4(IDX:0-3)", or "gpu:a100:4(IDX:0,2-4)")
 * into the share of task k when every task has per_task devices: task k
 * gets the k-th run of per_task indices.  Returns a new string, or NULL if
 * the detail has no index list or too few indices.
 */
/*
 * The indices [first, first + count) of a node's GRES detail (count < 0:
 * to the last) as a share "gpu:N(IDX:...)"; a new string, or NULL.
 */
static char *
placement_gres_slice(const char *detail, size_t first, long count)
{
	const char *idx, *p;
	char	   *end, name[128];
	long	    ids[1024], a, b;
	size_t	    n = 0, i, per;
	struct buf  out;

	if (detail == NULL || count == 0 ||
	    (idx = strstr(detail, "(IDX:")) == NULL)
		return (NULL);
	/* Name and type, without the count: "gpu:4" -> "gpu", "gpu:a:4" -> "gpu:a". */
	p = idx;
	while (p > detail && p[-1] != ':')
		p--;
	if (p == detail || (size_t)(p - 1 - detail) >= sizeof(name))
		return (NULL);
	memcpy(name, detail, p - 1 - detail);
	name[p - 1 - detail] = '\0';
	for (p = idx + 5; *p != ')' && *p != '\0';) {
		errno = 0;
		a = strtol(p, &end, 10);
		if (end == p || errno != 0 || a < 0)
			return (NULL);
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || errno != 0 || b < a)
				return (NULL);
			p = end;
		}
		/* Stops at b rather than past it: b may be LONG_MAX. */
		for (;;) {
			if (n == sizeof(ids) / sizeof(ids[0]))
				return (NULL);
			ids[n++] = a;
			if (a == b)
				break;
			a++;
		}
		if (*p == ',')
			p++;
		else if (*p != ')')
			return (NULL);
	}
	if (first >= n)
		return (NULL);
	per = count < 0 ? n - first : (size_t)count;
	if (first + per > n)
		return (NULL);
	buf_init(&out);
	buf_printf(&out, "%s:%zu(IDX:", name, per);
	for (i = first; i < first + per; i++) {
		/* Compress runs: 0,1,2 -> 0-2. */
		size_t j = i;
		while (j + 1 < first + per && ids[j + 1] == ids[j] + 1)
			j++;
		if (i != first)
			buf_addstr(&out, ",");
		if (j > i)
			buf_printf(&out, "%ld-%ld", ids[i], ids[j]);
		else
			buf_printf(&out, "%ld", ids[i]);
		i = j;
	}
	buf_addstr(&out, ")");
	return (buf_release(&out));
}

char *
placement_gres_share(const char *detail, int per_task, int k)
{
	if (per_task < 1 || k < 0)
		return (NULL);
	return (placement_gres_slice(detail, (size_t)k * (size_t)per_task,
	    per_task));
}

char *
placement_gres_rest(const char *detail, int per_task, int ntasks)
{
	if (per_task < 0 || ntasks < 0)
		return (NULL);
	return (placement_gres_slice(detail, (size_t)per_task * (size_t)ntasks,
	    -1));
}

int
placement_assign(const json_t *layout, size_t nmembers, int cpus_per_task,
    int per_node, int gpus_per_task, struct assignment *out, char *err,
    size_t errlen)
{
	const json_t *ent;
	size_t	      i, m = 0;
	int	      slots, k;

	json_array_foreach (layout, i, ent) {
		const char *node = json_string_value(
		    json_object_get(ent, "node"));
		const char *gres = json_string_value(
		    json_object_get(ent, "gres"));
		json_int_t cpus = json_integer_value(
		    json_object_get(ent, "cpus"));

		if (node == NULL) {
			snprintf(err, errlen,
			    "allocation entry %zu has no "
			    "node",
			    i);
			goto fail;
		}
		/* Shared: as many tasks as the node's CPUs hold. */
		slots = per_node > 0 ?
		    per_node :
		    (int)(cpus / (cpus_per_task > 0 ? cpus_per_task : 1));
		for (k = 0; k < slots && m < nmembers; k++, m++) {
			snprintf(out[m].node, sizeof(out[m].node), "%s", node);
			out[m].gres = gpus_per_task > 0 ?
			    placement_gres_share(gres, gpus_per_task, k) :
			    NULL;
		}
	}
	if (m < nmembers) {
		snprintf(err, errlen, "allocation holds %zu of %zu tasks", m,
		    nmembers);
		goto fail;
	}
	return (0);
fail:
	for (i = 0; i < m; i++) {
		free(out[i].gres);
		out[i].gres = NULL;
	}
	return (-1);
}

int
placement_assign_het(const json_t *layout, const json_t *het, size_t nmembers,
    struct assignment *out, char *err, size_t errlen)
{
	const json_t	  *comps = json_object_get(het, "comps");
	const json_t	  *shapes = json_object_get(het, "shapes"), *ent;
	struct assignment *part;
	json_t		  *sub;
	size_t		  *idx, i, m, k, done = 0;
	int		   rc = 0;

	if (json_array_size(comps) != nmembers) {
		snprintf(err, errlen,
		    "%zu members, %zu in the job's components", nmembers,
		    json_array_size(comps));
		return (-1);
	}
	idx = xcalloc(nmembers ? nmembers : 1, sizeof(*idx));
	part = xcalloc(nmembers ? nmembers : 1, sizeof(*part));
	for (k = 0; k < json_array_size(shapes) && rc == 0; k++) {
		/* Component k's nodes, and its members in order. */
		sub = json_array();
		json_array_foreach (layout, i, ent)
			if ((size_t)json_integer_value(
				json_object_get(ent, "comp")) == k)
				json_array_append(sub,
				    (json_t *)(uintptr_t)ent);
		for (i = m = 0; i < nmembers; i++)
			if ((size_t)json_integer_value(
				json_array_get(comps, i)) == k)
				idx[m++] = i;
		rc = placement_assign(sub, m,
		    (int)json_integer_value(
			json_array_get(json_array_get(shapes, k), 0)),
		    0,
		    (int)json_integer_value(
			json_array_get(json_array_get(shapes, k), 1)),
		    part, err, errlen);
		json_decref(sub);
		for (i = 0; rc == 0 && i < m; i++) {
			out[idx[i]] = part[i];
			done++;
		}
	}
	if (rc == 0 && done != nmembers) {
		snprintf(err, errlen, "components hold %zu of %zu members",
		    done, nmembers);
		rc = -1;
	}
	if (rc == -1)
		for (i = 0; i < nmembers; i++) {
			free(out[i].gres);
			out[i].gres = NULL;
		}
	free(idx);
	free(part);
	return (rc);
}
