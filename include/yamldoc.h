/*
 * The one YAML loader (libk8s/yamldoc.c): a file read with libyaml into a
 * tree of nodes, each with the line it starts on.  Its users are the
 * kubeconfig (libk8s/kubeconfig.c, through yamldoc_json), the daemons'
 * configuration file (common/config.c, which names lines in its errors)
 * and Slurm's topology.yaml as slurmctld gives it (bridge/slurm.c).
 * Every scalar is a string; a mapping keeps its keys in file order,
 * duplicates included.  The loader words no message: a refusal is a fault
 * and a line, and each caller says it in its own words.  Pure; runs on the
 * caller's thread.
 */
#ifndef YAMLDOC_H
#define YAMLDOC_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/*
 * yamldoc_load's flags.  Without YAMLDOC_ONE_DOC the first document is the
 * tree: later ones are read for syntax only, and a document that is only
 * an alias is passed over as if empty (how kubeconfig files are read).
 * With it, a second document is YAMLDOC_ERR_DOCS and an alias at the top
 * YAMLDOC_ERR_ALIAS (the config file).
 */
#define YAMLDOC_ONE_DOC 0x1

enum yamldoc_kind {
	YAMLDOC_SCALAR,
	YAMLDOC_MAP,
	YAMLDOC_SEQ
};

/* A node and its children belong to the tree yamldoc_load returned. */
struct yamldoc_node {
	enum yamldoc_kind     kind;
	size_t		      line;   /* 1-based, where the node starts */
	int		      plain;  /* an unquoted scalar */
	char		     *scalar; /* YAMLDOC_SCALAR: its text, to any \0 */
	size_t		      n;      /* entries of a map, items of a seq */
	struct yamldoc_node **keys;   /* YAMLDOC_MAP: its keys, scalars */
	struct yamldoc_node **vals;   /* a map's values, a seq's items */
};

/* Why yamldoc_load returned NULL. */
enum yamldoc_fault {
	YAMLDOC_ERR_OPEN,   /* fopen failed: errnum */
	YAMLDOC_ERR_EMPTY,  /* no document: the caller says if it is wrong */
	YAMLDOC_ERR_SYNTAX, /* libyaml refused it: problem */
	YAMLDOC_ERR_DEPTH,  /* a node nested deeper than max_depth */
	YAMLDOC_ERR_ALIAS,  /* an alias (*name); anchors and tags pass */
	YAMLDOC_ERR_KEY,    /* a mapping key that is not a scalar */
	YAMLDOC_ERR_DOCS    /* a second document, under YAMLDOC_ONE_DOC */
};

struct yamldoc_error {
	enum yamldoc_fault what;
	size_t		   line;    /* 1-based; 0 for OPEN and EMPTY */
	int		   errnum;  /* OPEN: fopen's errno */
	const char	  *problem; /* SYNTAX: libyaml's static text, or NULL */
};

/*
 * Reads path.  The top-level node is at depth 0, and a node deeper than
 * max_depth is refused.  Returns a new tree (free it with yamldoc_free),
 * or NULL with err filled.
 */
struct yamldoc_node *yamldoc_load(const char *path, int max_depth, int flags,
    struct yamldoc_error *err);
/* The same, from an open stream (the caller's, left open). */
struct yamldoc_node *yamldoc_read(FILE *fp, int max_depth, int flags,
    struct yamldoc_error *err);
/* NULL is a no-op. */
void yamldoc_free(struct yamldoc_node *);
/*
 * The tree as JSON: maps as objects (a key given twice keeps its last
 * value), seqs as arrays, scalars as strings.  Returns a new reference.
 */
json_t *yamldoc_json(const struct yamldoc_node *);

#endif /* YAMLDOC_H */
