/*
 * The node's evidence of a pod: its kubelet cgroup (see cgroup.h).  Only
 * libc: the epilog runs at every job end on every node, so it reads a few
 * files and loads nothing.
 */
#include <sys/inotify.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"

/* Deeper than kubepods/QOS/pod/container/...: not the kubelet's. */
#define CGROUP_MAX_DEPTH 6

static int
cgroup_isdir(const char *path)
{
	struct stat st;

	return (stat(path, &st) == 0 && S_ISDIR(st.st_mode));
}

int
cgroup_open(struct cgroup_tree *t, const char *mount)
{
	/* Version 1: the first hierarchy that every container joins. */
	static const char *const v1[] = { "pids", "memory", "cpu,cpuacct",
		"cpu", "systemd" };
	char   path[512];
	size_t i;

	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/cgroup.controllers", mount);
	if (access(path, F_OK) == 0) {
		t->v2 = 1;
		snprintf(t->root, sizeof(t->root), "%s", mount);
	} else {
		for (i = 0; i < sizeof(v1) / sizeof(v1[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s/kubepods", mount,
			    v1[i]);
			if (cgroup_isdir(path))
				break;
			snprintf(path, sizeof(path), "%s/%s/kubepods.slice",
			    mount, v1[i]);
			if (cgroup_isdir(path))
				break;
		}
		if (i == sizeof(v1) / sizeof(v1[0]))
			return (-1);
		snprintf(t->root, sizeof(t->root), "%s/%s", mount, v1[i]);
	}
	snprintf(path, sizeof(path), "%s/kubepods", t->root);
	if (cgroup_isdir(path))
		return (0);
	snprintf(path, sizeof(path), "%s/kubepods.slice", t->root);
	if (cgroup_isdir(path))
		return (0);
	t->root[0] = '\0';
	return (-1);
}

int
cgroup_pod(const struct cgroup_tree *t, const char *uid, char *path,
    size_t len)
{
	static const char *const qos[] = { "burstable", "besteffort", NULL };
	char   u[64];
	size_t i;

	/* A UID is 36 characters of hex and dashes; anything else is not. */
	if (strlen(uid) == 0 || strlen(uid) >= sizeof(u) ||
	    strspn(uid, "0123456789abcdef-") != strlen(uid))
		return (0);
	for (i = 0; uid[i] != '\0'; i++)
		u[i] = uid[i] == '-' ? '_' : uid[i];
	u[i] = '\0';
	for (i = 0; i < sizeof(qos) / sizeof(qos[0]); i++) {
		/* cgroupfs */
		if (qos[i] != NULL)
			snprintf(path, len, "%s/kubepods/%s/pod%s", t->root,
			    qos[i], uid);
		else
			snprintf(path, len, "%s/kubepods/pod%s", t->root, uid);
		if (cgroup_isdir(path))
			return (1);
		/* systemd */
		if (qos[i] != NULL)
			snprintf(path, len,
			    "%s/kubepods.slice/kubepods-%s.slice/"
			    "kubepods-%s-pod%s.slice",
			    t->root, qos[i], qos[i], u);
		else
			snprintf(path, len,
			    "%s/kubepods.slice/kubepods-pod%s.slice", t->root,
			    u);
		if (cgroup_isdir(path))
			return (1);
	}
	path[0] = '\0';
	return (0);
}

/*
 * Version 1 (and a version 2 without cgroup.events): calls fn on each pid
 * of path's cgroup.procs and its children's; the number of pids, or -1
 * when fn failed for one.
 */
static long
cgroup_walk(const char *path, int depth, int (*fn)(long))
{
	char	       sub[1024], line[32];
	FILE	      *f;
	DIR	      *d;
	struct dirent *de;
	long	       n = 0, m, pid;

	snprintf(sub, sizeof(sub), "%s/cgroup.procs", path);
	if ((f = fopen(sub, "r")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			pid = strtol(line, NULL, 10);
			if (pid <= 0)
				continue;
			n++;
			if (fn != NULL && fn(pid) == -1)
				n = -1;
			if (n == -1)
				break;
		}
		fclose(f);
	}
	if (n == -1 || depth >= CGROUP_MAX_DEPTH ||
	    (d = opendir(path)) == NULL)
		return (n);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		if (!cgroup_isdir(sub))
			continue;
		if ((m = cgroup_walk(sub, depth + 1, fn)) == -1) {
			n = -1;
			break;
		}
		n += m;
	}
	closedir(d);
	return (n);
}

int
cgroup_populated(const struct cgroup_tree *t, const char *path)
{
	char  file[1024], line[64];
	FILE *f;
	int   populated = -1;

	if (t->v2) {
		snprintf(file, sizeof(file), "%s/cgroup.events", path);
		if ((f = fopen(file, "r")) == NULL)
			return (errno == ENOENT && !cgroup_isdir(path) ? 0 :
									 1);
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "populated ", 10) == 0)
				populated = line[10] == '1';
		fclose(f);
		if (populated != -1)
			return (populated);
	}
	return (cgroup_walk(path, 0, NULL) > 0);
}

static int
cgroup_sigkill(long pid)
{
	return (kill((pid_t)pid, SIGKILL) == -1 && errno != ESRCH ? -1 : 0);
}

int
cgroup_kill(const struct cgroup_tree *t, const char *path)
{
	char file[1024];
	int  fd;

	if (t->v2) {
		snprintf(file, sizeof(file), "%s/cgroup.kill", path);
		if ((fd = open(file, O_WRONLY | O_CLOEXEC)) != -1) {
			if (write(fd, "1", 1) == 1) {
				close(fd);
				return (0);
			}
			close(fd);
		}
	}
	return (cgroup_walk(path, 0, cgroup_sigkill) == -1 ? -1 : 0);
}

int
cgroup_watch(const struct cgroup_tree *t, char *const *paths, size_t n)
{
	char   file[1024];
	size_t i, watched = 0;
	int    fd;

	if (!t->v2 || n == 0 ||
	    (fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1)
		return (-1);
	for (i = 0; i < n; i++) {
		snprintf(file, sizeof(file), "%s/cgroup.events", paths[i]);
		/* The kernel tells a change of "populated" as IN_MODIFY. */
		if (inotify_add_watch(fd, file, IN_MODIFY | IN_DELETE_SELF) !=
		    -1)
			watched++;
	}
	if (watched == 0) {
		close(fd);
		return (-1);
	}
	return (fd);
}
