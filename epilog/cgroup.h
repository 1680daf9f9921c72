/*
 * The node's own evidence of a pod (cgroup.c): the cgroup the kubelet
 * makes for it, under the node's cgroup tree, holds every process of its
 * containers until the last one exits, whatever the API server says,
 * whether or not the kubelet and the container runtime still run.
 *
 * Both kubelet cgroup drivers and both cgroup versions: the pod's cgroup is
 * kubepods[.slice]/[QOS/]pod<UID> (cgroupfs) or
 * kubepods.slice/[kubepods-QOS.slice/]kubepods[-QOS]-pod<UID_>.slice
 * (systemd, the UID's dashes as underscores), under the unified tree
 * (version 2) or under the pids, memory or cpu hierarchy (version 1).
 * A pod whose cgroup is not there has no process on this node.
 */
#ifndef EPILOG_CGROUP_H
#define EPILOG_CGROUP_H

#include <stddef.h>

struct cgroup_tree {
	char root[256]; /* the hierarchy kubepods is in */
	int  v2;	/* the unified tree: cgroup.events, cgroup.kill */
};

/*
 * Finds kubepods under mount (normally /sys/fs/cgroup): 0, or -1 when
 * the node has no kubelet cgroups at all (t is left empty).
 */
int cgroup_open(struct cgroup_tree *t, const char *mount);

/*
 * The pod's cgroup into path: 1, or 0 when it has none here (never
 * started on this node, or the kubelet removed it once it emptied).
 */
int cgroup_pod(const struct cgroup_tree *t, const char *uid, char *path,
    size_t len);

/*
 * Does any process run in the cgroup or below it?  1 or 0; a cgroup
 * that is gone is empty.
 */
int cgroup_populated(const struct cgroup_tree *t, const char *path);

/*
 * Kills every process in the cgroup and below it (cgroup.kill, else
 * SIGKILL to each listed process): 0, or -1 when one could not be told.
 */
int cgroup_kill(const struct cgroup_tree *t, const char *path);

/*
 * A descriptor that becomes readable when cgroup.events of one of the
 * paths changes (version 2: inotify), or -1 (version 1, or none left:
 * the caller polls).  Closed by the caller.
 */
int cgroup_watch(const struct cgroup_tree *t, char *const *paths, size_t n);

#endif
