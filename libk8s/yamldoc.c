/*
 * The one YAML loader (yamldoc.h), and the only file that includes
 * <yaml.h>: libyaml's events built into a tree of nodes that keep their
 * lines, and that tree as JSON.  Pure; runs on the caller's thread (at
 * startup, for the kubeconfig and the config file).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <yaml.h>

#include "xmalloc.h"
#include "yamldoc.h"

struct yamldoc_loader {
	yaml_parser_t	      parser;
	int		      max_depth;
	struct yamldoc_error *err;
};

/* Fills err; returns NULL, for a builder to return. */
static struct yamldoc_node *
yamldoc_fault(struct yamldoc_error *err, enum yamldoc_fault what, size_t line)
{
	err->what = what;
	err->line = line;
	err->errnum = 0;
	err->problem = NULL;
	return (NULL);
}

void
yamldoc_free(struct yamldoc_node *y)
{
	size_t i;

	if (y == NULL)
		return;
	for (i = 0; i < y->n; i++) {
		if (y->keys != NULL)
			yamldoc_free(y->keys[i]);
		yamldoc_free(y->vals[i]);
	}
	free(y->keys);
	free(y->vals);
	free(y->scalar);
	free(y);
}

/* Reads the next event; a parse error fills err. */
static int
yamldoc_next(struct yamldoc_loader *l, yaml_event_t *ev)
{
	if (yaml_parser_parse(&l->parser, ev))
		return (0);
	yamldoc_fault(l->err, YAMLDOC_ERR_SYNTAX,
	    l->parser.problem_mark.line + 1);
	l->err->problem = l->parser.problem;
	return (-1);
}

/* Builds the node that starts with ev (which the caller deletes). */
static struct yamldoc_node *
yamldoc_build(struct yamldoc_loader *l, const yaml_event_t *ev, int depth)
{
	struct yamldoc_node *y, *child;
	yaml_event_t	     next;
	size_t		     cap = 0;
	int		     want_key = 1;

	if (depth > l->max_depth)
		return (yamldoc_fault(l->err, YAMLDOC_ERR_DEPTH,
		    ev->start_mark.line + 1));
	y = xcalloc(1, sizeof(*y));
	y->line = ev->start_mark.line + 1;
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		y->kind = YAMLDOC_SCALAR;
		y->scalar = xstrdup((const char *)ev->data.scalar.value);
		y->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		return (y);
	case YAML_MAPPING_START_EVENT:
		y->kind = YAMLDOC_MAP;
		break;
	case YAML_SEQUENCE_START_EVENT:
		y->kind = YAMLDOC_SEQ;
		break;
	default:
		/* The one other event that starts a node: an alias. */
		free(y);
		return (yamldoc_fault(l->err, YAMLDOC_ERR_ALIAS,
		    ev->start_mark.line + 1));
	}
	for (;;) {
		if (yamldoc_next(l, &next) == -1)
			goto fail;
		if (next.type == YAML_MAPPING_END_EVENT ||
		    next.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&next);
			break;
		}
		if (y->kind == YAMLDOC_MAP && want_key &&
		    next.type != YAML_SCALAR_EVENT) {
			yamldoc_fault(l->err, YAMLDOC_ERR_KEY,
			    next.start_mark.line + 1);
			yaml_event_delete(&next);
			goto fail;
		}
		child = yamldoc_build(l, &next, depth + 1);
		yaml_event_delete(&next);
		if (child == NULL)
			goto fail;
		/*
		 * Room for one more entry (a map's key and its value).  The
		 * arrays hold pointers: sizeof a pointer is meant.
		 */
		if (want_key && y->n == cap) {
			cap = cap != 0 ? cap * 2 : 8;
			/* NOLINTBEGIN(bugprone-sizeof-expression) */
			y->vals = xreallocarray(y->vals, cap, sizeof(*y->vals));
			if (y->kind == YAMLDOC_MAP)
				y->keys = xreallocarray(y->keys, cap,
				    sizeof(*y->keys));
			/* NOLINTEND(bugprone-sizeof-expression) */
		}
		if (y->kind == YAMLDOC_MAP && want_key) {
			y->keys[y->n] = child;
			want_key = 0;
			continue;
		}
		y->vals[y->n++] = child;
		want_key = 1;
	}
	return (y);
fail:
	if (y->kind == YAMLDOC_MAP && !want_key)
		yamldoc_free(y->keys[y->n]);
	yamldoc_free(y);
	return (NULL);
}

/*
 * Does ev, at the top level, start the root node?  Stream and document
 * marks do not.  Without YAMLDOC_ONE_DOC, neither does an event after the
 * root (later documents pass by) nor a document that is only an alias (as
 * if empty); with it, every other event does, and a second is refused.
 */
static int
yamldoc_root_event(const yaml_event_t *ev, const struct yamldoc_node *root,
    int flags)
{
	if (ev->type == YAML_STREAM_START_EVENT ||
	    ev->type == YAML_DOCUMENT_START_EVENT ||
	    ev->type == YAML_DOCUMENT_END_EVENT)
		return (0);
	if ((flags & YAMLDOC_ONE_DOC) != 0)
		return (1);
	return (root == NULL && ev->type != YAML_ALIAS_EVENT);
}

struct yamldoc_node *
yamldoc_load(const char *path, int max_depth, int flags,
    struct yamldoc_error *err)
{
	struct yamldoc_node *root;
	FILE		    *fp;

	if ((fp = fopen(path, "r")) == NULL) {
		yamldoc_fault(err, YAMLDOC_ERR_OPEN, 0);
		err->errnum = errno;
		return (NULL);
	}
	root = yamldoc_read(fp, max_depth, flags, err);
	fclose(fp);
	return (root);
}

struct yamldoc_node *
yamldoc_read(FILE *fp, int max_depth, int flags, struct yamldoc_error *err)
{
	struct yamldoc_loader l = { .max_depth = max_depth, .err = err };
	struct yamldoc_node  *root = NULL;
	yaml_event_t	      ev;

	yaml_parser_initialize(&l.parser);
	yaml_parser_set_input_file(&l.parser, fp);
	for (;;) {
		if (yamldoc_next(&l, &ev) == -1)
			goto fail;
		if (ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (!yamldoc_root_event(&ev, root, flags)) {
			yaml_event_delete(&ev);
			continue;
		}
		if (root != NULL) {
			yamldoc_fault(err, YAMLDOC_ERR_DOCS,
			    ev.start_mark.line + 1);
			yaml_event_delete(&ev);
			goto fail;
		}
		root = yamldoc_build(&l, &ev, 0);
		yaml_event_delete(&ev);
		if (root == NULL)
			goto fail;
	}
	yaml_parser_delete(&l.parser);
	if (root == NULL)
		yamldoc_fault(err, YAMLDOC_ERR_EMPTY, 0);
	return (root);
fail:
	yaml_parser_delete(&l.parser);
	yamldoc_free(root);
	return (NULL);
}

json_t *
yamldoc_json(const struct yamldoc_node *y)
{
	json_t *j;
	size_t	i;

	if (y->kind == YAMLDOC_SCALAR)
		return (json_string(y->scalar));
	j = y->kind == YAMLDOC_MAP ? json_object() : json_array();
	for (i = 0; i < y->n; i++) {
		if (y->kind == YAMLDOC_MAP)
			json_object_set_new(j, y->keys[i]->scalar,
			    yamldoc_json(y->vals[i]));
		else
			json_array_append_new(j, yamldoc_json(y->vals[i]));
	}
	return (j);
}
