/*
 * The configuration file both daemons read (/etc/slurm-bridge/config.yaml),
 * read with libk8s's YAML loader (yamldoc.h).  Pure: config_load reads one
 * file and fills the struct; nothing else is touched.  The compat keys are
 * Slinky's; the rest are ours, documented in docs/admins/configuration.md.
 */
#ifndef CONFIG_H
#define CONFIG_H

#include <stddef.h>

#include <jansson.h>

#include "bounds.h"
#include "dra.h"

#define CONFIG_DEFAULT_PATH "/etc/slurm-bridge/config.yaml"

/* A node-selector match that names a Slurm GRES type. */
struct config_gres_type {
	json_t *selector; /* {"label": "value", ...}, all must match */
	char   *type;	  /* e.g. "a100": nvidia.com/gpu: 2 -> gpu:a100:2 */
};

/*
 * What a node-label topology level means to Slurm (docs/users/topology.md):
 * the nodes under one value of the label are
 */
enum config_topo_kind {
	TOPO_SWITCH, /* ... under one leaf switch (topology/tree) */
	TOPO_BLOCK,  /* ... one block (topology/block) */
	TOPO_NODE,   /* ... one node */
	TOPO_LABEL   /* ... known to Slurm as nothing: the bridge keeps the
			gang within one value (its excluded nodes) */
};

struct config_topo_level {
	char		     *label; /* node label key */
	enum config_topo_kind kind;
	/* slurmTopology: its topology.yaml name (Slurm 25.05 on); NULL: the default */
	char *slurm_name;
};

struct config {
	char *path; /* the file loaded, or NULL */
	/* compat (Slinky) */
	char   *scheduler_name;
	char   *partition;
	char  **managed_namespaces;	    /* NULL-terminated, may be empty */
	json_t *managed_namespace_selector; /* LabelSelector or NULL */
	char   *mcs_label;		    /* or NULL */
	/* ours */
	int   exclusive;       /* default placement: 0 shared */
	char *default_account; /* or NULL: Slurm's default */
	int   poll_ms;	       /* Slurm poll interval while pending */
	int   jobid_label;     /* label + finalizer before binding */
	struct config_gres_type	 *gres_types;
	size_t			  ngres_types;
	struct config_topo_level *topology;
	size_t			  ntopology;
	int			  gang_gpu_switch_threshold; /* 0: off */
	int preferred_wait_minutes; /* for preferred topology */
	int api_qps;		    /* Kubernetes API requests per second */
	int api_burst;
	/*
	 * managedTaintEffect: the effect of the managed-node taint the
	 * scheduler puts on Slurm's nodes, "NoSchedule" (the default) or
	 * "NoExecute" (an explicit choice: it evicts what does not tolerate it)
	 */
	char *taint_effect;
	/*
	 * maxEndGraceSeconds: the longest grace period a pod gets when Slurm
	 * ends its job (time limit, scancel): its own if shorter.  Within
	 * Slurm's UnkillableStepTimeout and the node epilog's --max-wait, so
	 * a tenant's long terminationGracePeriodSeconds cannot hold a node.
	 */
	int end_grace_max_s;
	/*
	 * unhealthyNodesThreshold: the percentage of the nodes NotReady at
	 * once (more than 2 of them) from which no pod is failed for
	 * NotReady, as kube-controller-manager's --unhealthy-zone-threshold
	 * (0.55): 1 to 100, default 55; 101 never holds back.
	 */
	int unhealthy_nodes_pct;
	/* installName, or NULL: derived from the cluster at start */
	char		  *install_name;
	struct bounds	   bounds; /* for namespaces without the annotations */
	struct dra_classes dra;	   /* deviceClasses: DRA as Slurm GRES */
	/*
	 * deviceBindingTimeoutSeconds: how long a pod's Binding waits for
	 * its devices' bindingConditions before the allocation is given back
	 * (kube-scheduler's DynamicResources bindingTimeout, 600 s)
	 */
	int binding_timeout_s;
};

/* A config with the built-in defaults; never NULL.  Free with config_free. */
struct config *config_new(void);
void	       config_free(struct config *);
/*
 * Loads path over the defaults in c.  On error returns -1 with
 * "FILE:LINE: KEY: what is wrong (expected form)" in err; c may then hold
 * part of the file and should be freed.
 */
int config_load(struct config *c, const char *path, char *err, size_t errlen);
/*
 * Loads path, or CONFIG_DEFAULT_PATH when path is NULL and that file
 * exists (none: the defaults stay).  Errors as config_load.
 */
int config_load_default(struct config *c, const char *path, char *err,
    size_t errlen);
/* The environment variable name if set and not empty, else def. */
const char *config_env(const char *name, const char *def);
/* The topology level for a node label key, or NULL. */
const struct config_topo_level *config_topo_find(const struct config *,
    const char *label);

#endif /* CONFIG_H */
