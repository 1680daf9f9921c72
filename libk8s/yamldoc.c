/*
 * YAML documents (kubeconfig files, the scheduler's config) read with
 * libyaml into a jansson tree: mappings become objects, sequences arrays,
 * scalars strings.  Pure; the caller owns the tree.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "internal.h"

static json_t *yamldoc_node(yaml_parser_t *, yaml_event_t *, int depth,
    struct k8s_error *);

/* Reads the next event; fills err on a parse error. */
static int
yamldoc_next(yaml_parser_t *p, yaml_event_t *ev, struct k8s_error *err)
{
	if (yaml_parser_parse(p, ev))
		return (0);
	error_set(err, 0, "BadKubeconfig", "line %zu: %s",
	    p->problem_mark.line + 1,
	    p->problem != NULL ? p->problem : "YAML syntax error");
	return (-1);
}

/*
 * Converts the node that starts with ev (already read) into JSON.  Every
 * scalar becomes a string: a kubeconfig has no numbers we need, and
 * "insecure-skip-tls-verify" is interpreted where it is read.
 */
static json_t *
yamldoc_node(yaml_parser_t *p, yaml_event_t *ev, int depth,
    struct k8s_error *err)
{
	json_t	    *node = NULL, *child;
	yaml_event_t kev, vev;
	char	    *key;

	if (depth > 64) {
		error_set(err, 0, "BadKubeconfig", "nesting too deep");
		return (NULL);
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return (json_stringn((const char *)ev->data.scalar.value,
		    ev->data.scalar.length));
	case YAML_SEQUENCE_START_EVENT:
		node = json_array();
		for (;;) {
			if (yamldoc_next(p, &vev, err) == -1)
				goto fail;
			if (vev.type == YAML_SEQUENCE_END_EVENT) {
				yaml_event_delete(&vev);
				return (node);
			}
			child = yamldoc_node(p, &vev, depth + 1, err);
			yaml_event_delete(&vev);
			if (child == NULL)
				goto fail;
			json_array_append_new(node, child);
		}
	case YAML_MAPPING_START_EVENT:
		node = json_object();
		for (;;) {
			if (yamldoc_next(p, &kev, err) == -1)
				goto fail;
			if (kev.type == YAML_MAPPING_END_EVENT) {
				yaml_event_delete(&kev);
				return (node);
			}
			if (kev.type != YAML_SCALAR_EVENT) {
				error_set(err, 0, "BadKubeconfig",
				    "line %zu: mapping key is not a scalar",
				    kev.start_mark.line + 1);
				yaml_event_delete(&kev);
				goto fail;
			}
			key = xstrndup((const char *)kev.data.scalar.value,
			    kev.data.scalar.length);
			yaml_event_delete(&kev);
			if (yamldoc_next(p, &vev, err) == -1) {
				free(key);
				goto fail;
			}
			child = yamldoc_node(p, &vev, depth + 1, err);
			yaml_event_delete(&vev);
			if (child == NULL) {
				free(key);
				goto fail;
			}
			json_object_set_new(node, key, child);
			free(key);
		}
	case YAML_ALIAS_EVENT:
		error_set(err, 0, "BadKubeconfig",
		    "line %zu: YAML aliases are not supported",
		    ev->start_mark.line + 1);
		return (NULL);
	default:
		error_set(err, 0, "BadKubeconfig",
		    "line %zu: unexpected YAML event", ev->start_mark.line + 1);
		return (NULL);
	}
fail:
	json_decref(node);
	return (NULL);
}

json_t *
yamldoc_load(const char *path, struct k8s_error *err)
{
	FILE	     *fp;
	yaml_parser_t p;
	yaml_event_t  ev;
	json_t	     *root = NULL;
	int	      done = 0;

	if ((fp = fopen(path, "r")) == NULL) {
		error_set(err, 0, "NotFound", "%s: %s", path, strerror(errno));
		return (NULL);
	}
	yaml_parser_initialize(&p);
	yaml_parser_set_input_file(&p, fp);
	while (!done) {
		if (yamldoc_next(&p, &ev, err) == -1)
			goto fail;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
		case YAML_SCALAR_EVENT:
			if (root == NULL &&
			    (root = yamldoc_node(&p, &ev, 0, err)) == NULL) {
				yaml_event_delete(&ev);
				goto fail;
			}
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	fclose(fp);
	if (root == NULL)
		error_set(err, 0, "BadKubeconfig", "%s: empty file", path);
	return (root);
fail:
	yaml_parser_delete(&p);
	fclose(fp);
	json_decref(root);
	return (NULL);
}
