/*
 * fitcheck: the placement rule (common/fit.c) over a cluster in a file,
 * for the contract test with kube-scheduler as the oracle
 * (test/contract/diff.sh).  Reads one JSON document
 *
 *   {"nodes": [Node...], "pods_on": {"NODE": [Pod...]}, "pods": [Pod...]}
 *
 * (the objects as the API server returns them) and prints one JSON line
 * per pod of "pods", in their order:
 *
 *   {"pod": NAME, "fit": [NODE...], "why": {NODE: REASON}}
 *
 * "fit" the nodes fit_node accepts beside the pods of pods_on, sorted by
 * name; "why" kube-scheduler's reason text for each node it refuses.
 * Exits 0, 1 when the file cannot be read, 2 on a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "k8s.h"
#include "fit.h"

/* The pods on one node, as fit_node takes them. */
struct fitcheck_node {
	const json_t *node;
	json_t	    **others;
	size_t	      n;
};

static void
fitcheck_usage(FILE *fp)
{
	fprintf(fp,
	    "usage: fitcheck FILE\n"
	    "  FILE  {\"nodes\": [...], \"pods_on\": {NODE: [...]}, "
	    "\"pods\": [...]}, or - for stdin\n"
	    "Prints {\"pod\": NAME, \"fit\": [NODE...], \"why\": {NODE: "
	    "REASON}} per pod.\n");
}

static int
fitcheck_strcmp(const void *a, const void *b)
{
	return (strcmp(*(const char *const *)a, *(const char *const *)b));
}

/* The nodes of root with the pods on each; NULL on a malformed file. */
static struct fitcheck_node *
fitcheck_nodes(const json_t *root, size_t *count)
{
	const json_t	     *nodes = json_object_get(root, "nodes");
	const json_t	     *on = json_object_get(root, "pods_on");
	const json_t	     *node, *pods;
	struct fitcheck_node *v;
	const char	     *name;
	size_t		      i, j;

	if (!json_is_array(nodes) || (on != NULL && !json_is_object(on)))
		return (NULL);
	v = calloc(json_array_size(nodes) + 1, sizeof(*v));
	if (v == NULL)
		return (NULL);
	json_array_foreach (nodes, i, node) {
		name = k8s_obj_name(node);
		pods = name != NULL ? json_object_get(on, name) : NULL;
		v[i].node = node;
		v[i].n = json_array_size(pods);
		v[i].others = calloc(v[i].n + 1, sizeof(json_t *));
		if (name == NULL || v[i].others == NULL) {
			*count = i + 1;
			return (v);
		}
		for (j = 0; j < v[i].n; j++)
			v[i].others[j] = json_array_get(pods, j);
	}
	*count = json_array_size(nodes);
	return (v);
}

static void
fitcheck_free(struct fitcheck_node *v, size_t count)
{
	size_t i;

	for (i = 0; v != NULL && i < count; i++)
		free(v[i].others);
	free(v);
}

/* One pod against every node: its line on stdout; 0, or -1. */
static int
fitcheck_pod(const json_t *pod, const struct fitcheck_node *v, size_t count)
{
	const char **fit;
	json_t	    *line, *names, *why;
	char	     text[512];
	size_t	     i, n = 0;
	int	     rc = -1;

	fit = calloc(count + 1, sizeof(*fit));
	line = json_object();
	names = json_array();
	why = json_object();
	if (fit == NULL || line == NULL || names == NULL || why == NULL)
		goto out;
	for (i = 0; i < count; i++) {
		if (fit_node(pod, v[i].node, v[i].others, v[i].n, text,
			sizeof(text)) == FIT_OK)
			fit[n++] = k8s_obj_name(v[i].node);
		else
			json_object_set_new(why, k8s_obj_name(v[i].node),
			    json_string(text));
	}
	qsort(fit, n, sizeof(*fit), fitcheck_strcmp);
	for (i = 0; i < n; i++)
		json_array_append_new(names, json_string(fit[i]));
	json_object_set_new(line, "pod",
	    json_string(k8s_obj_name(pod) != NULL ? k8s_obj_name(pod) : ""));
	json_object_set(line, "fit", names);
	json_object_set(line, "why", why);
	if (json_dumpf(line, stdout, JSON_COMPACT) == -1 ||
	    fputc('\n', stdout) == EOF)
		goto out;
	rc = 0;
out:
	json_decref(why);
	json_decref(names);
	json_decref(line);
	free(fit);
	return (rc);
}

int
main(int argc, char *argv[])
{
	struct fitcheck_node *v = NULL;
	json_error_t	      err;
	const json_t	     *pod;
	json_t		     *root = NULL;
	size_t		      count = 0, i;
	int		      rc = 1;

	if (argc != 2 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0) {
		fitcheck_usage(argc == 2 ? stdout : stderr);
		return (argc == 2 ? 0 : 2);
	}
	root = strcmp(argv[1], "-") == 0 ? json_loadf(stdin, 0, &err) :
					   json_load_file(argv[1], 0, &err);
	if (root == NULL) {
		fprintf(stderr, "fitcheck: %s:%d: %s\n", argv[1], err.line,
		    err.text);
		goto out;
	}
	if ((v = fitcheck_nodes(root, &count)) == NULL ||
	    !json_is_array(json_object_get(root, "pods"))) {
		fprintf(stderr,
		    "fitcheck: %s: want {\"nodes\": [...], \"pods_on\": "
		    "{...}, \"pods\": [...]}\n",
		    argv[1]);
		goto out;
	}
	for (i = 0; i < count; i++)
		if (k8s_obj_name(v[i].node) == NULL || v[i].others == NULL) {
			fprintf(stderr, "fitcheck: %s: nodes[%zu]: no name\n",
			    argv[1], i);
			goto out;
		}
	json_array_foreach (json_object_get(root, "pods"), i, pod) {
		if (fitcheck_pod(pod, v, count) == -1) {
			fprintf(stderr, "fitcheck: cannot write pods[%zu]\n",
			    i);
			goto out;
		}
	}
	if (fflush(stdout) == EOF)
		goto out;
	rc = 0;
out:
	fitcheck_free(v, count);
	json_decref(root);
	return (rc);
}
