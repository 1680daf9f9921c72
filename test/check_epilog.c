/*
 * The node epilog's evidence (epilog/cgroup.c) over cgroup trees built in
 * a temporary directory the way the kubelet lays them out: both cgroup
 * drivers, both cgroup versions, every QoS class.  A real child process
 * stands in for a container for the kill of version 1.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "cgroup.h"
#include "check_suites.h"

#define UID  "1f0e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
#define UID_ "1f0e2d3c_4b5a_6978_8796_a5b4c3d2e1f0"

static char root[256];

static void
mkdirs(const char *rel)
{
	char path[1024], *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
	ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
}

static void
put(const char *rel, const char *text)
{
	char  path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static void
setup(void)
{
	snprintf(root, sizeof(root), "/tmp/check-epilog-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return (remove(path));
}

static void
teardown(void)
{
	ck_assert_int_eq(nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* Where each driver and QoS class puts the pod, relative to the tree. */
static const struct {
	const char *dir; /* the pod's cgroup */
	const char *qos;
} layouts[] = {
	{ "kubepods/burstable/pod" UID, "Burstable, cgroupfs" },
	{ "kubepods/besteffort/pod" UID, "BestEffort, cgroupfs" },
	{ "kubepods/pod" UID, "Guaranteed, cgroupfs" },
	{ "kubepods.slice/kubepods-burstable.slice/"
	  "kubepods-burstable-pod" UID_ ".slice",
	    "Burstable, systemd" },
	{ "kubepods.slice/kubepods-besteffort.slice/"
	  "kubepods-besteffort-pod" UID_ ".slice",
	    "BestEffort, systemd" },
	{ "kubepods.slice/kubepods-pod" UID_ ".slice", "Guaranteed, systemd" },
};

/* Version 2: cgroup.events says whether a process is left. */
START_TEST(test_v2_layouts)
{
	struct cgroup_tree t;
	char		   rel[512], path[512], want[600];

	put("cgroup.controllers", "cpu memory pids\n");
	snprintf(rel, sizeof(rel), "%s/ctr", layouts[_i].dir);
	mkdirs(rel);
	snprintf(rel, sizeof(rel), "%s/cgroup.events", layouts[_i].dir);
	put(rel, "populated 1\nfrozen 0\n");
	ck_assert_int_eq(cgroup_open(&t, root), 0);
	ck_assert_int_eq(t.v2, 1);
	ck_assert_msg(cgroup_pod(&t, UID, path, sizeof(path)) == 1, "%s",
	    layouts[_i].qos);
	snprintf(want, sizeof(want), "%s/%s", root, layouts[_i].dir);
	ck_assert_str_eq(path, want);
	ck_assert_int_eq(cgroup_populated(&t, path), 1);
	put(rel, "populated 0\nfrozen 0\n");
	ck_assert_int_eq(cgroup_populated(&t, path), 0);
	/* Another pod's UID has no cgroup here; nor has a malformed one. */
	ck_assert_int_eq(cgroup_pod(&t, "00000000-0000-0000-0000-000000000000",
			     path, sizeof(path)),
	    0);
	ck_assert_int_eq(cgroup_pod(&t, "../../etc", path, sizeof(path)), 0);
}
END_TEST

/* Version 2: the kill is cgroup.kill; a watch wakes on cgroup.events. */
START_TEST(test_v2_kill_watch)
{
	struct cgroup_tree t;
	char		   path[512], kill[600], buf[8] = "", *paths[1];
	FILE		  *f;
	int		   fd;

	put("cgroup.controllers", "cpu memory pids\n");
	mkdirs("kubepods.slice/kubepods-pod" UID_ ".slice");
	put("kubepods.slice/kubepods-pod" UID_ ".slice/cgroup.events",
	    "populated 1\n");
	put("kubepods.slice/kubepods-pod" UID_ ".slice/cgroup.kill", "");
	ck_assert_int_eq(cgroup_open(&t, root), 0);
	ck_assert_int_eq(cgroup_pod(&t, UID, path, sizeof(path)), 1);
	ck_assert_int_eq(cgroup_kill(&t, path), 0);
	snprintf(kill, sizeof(kill), "%s/cgroup.kill", path);
	ck_assert_ptr_nonnull(f = fopen(kill, "r"));
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_str_eq(buf, "1");
	paths[0] = path;
	fd = cgroup_watch(&t, paths, 1);
	ck_assert_int_ge(fd, 0);
	close(fd);
}
END_TEST

/* Version 1: any cgroup.procs at or below the pod's lists a process. */
START_TEST(test_v1_populated_kill)
{
	struct cgroup_tree t;
	char		   path[512], pid[32], *paths[1];
	pid_t		   child;
	int		   status;

	mkdirs("cpu/kubepods/besteffort");
	mkdirs("pids/kubepods/burstable/pod" UID "/abc123");
	put("pids/kubepods/burstable/pod" UID "/cgroup.procs", "");
	put("pids/kubepods/burstable/pod" UID "/abc123/cgroup.procs", "");
	ck_assert_int_eq(cgroup_open(&t, root), 0);
	ck_assert_int_eq(t.v2, 0);
	ck_assert_int_eq(cgroup_pod(&t, UID, path, sizeof(path)), 1);
	ck_assert(strstr(path, "/pids/kubepods/burstable/pod" UID) != NULL);
	ck_assert_int_eq(cgroup_populated(&t, path), 0);
	if ((child = fork()) == 0) {
		pause();
		_exit(0);
	}
	ck_assert_int_gt(child, 0);
	snprintf(pid, sizeof(pid), "%d\n", (int)child);
	put("pids/kubepods/burstable/pod" UID "/abc123/cgroup.procs", pid);
	ck_assert_int_eq(cgroup_populated(&t, path), 1);
	paths[0] = path;
	ck_assert_int_eq(cgroup_watch(&t, paths, 1), -1); /* polled */
	ck_assert_int_eq(cgroup_kill(&t, path), 0);
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}
END_TEST

/* No kubepods anywhere: not a kubelet's node. */
START_TEST(test_no_kubelet)
{
	struct cgroup_tree t;

	mkdirs("pids/system.slice");
	ck_assert_int_eq(cgroup_open(&t, root), -1);
	put("cgroup.controllers", "cpu\n");
	ck_assert_int_eq(cgroup_open(&t, root), -1);
}
END_TEST

Suite *
epilog_suite(void)
{
	Suite *s = suite_create("epilog");
	TCase *tc = tcase_create("cgroup");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_v2_layouts, 0,
	    (int)(sizeof(layouts) / sizeof(layouts[0])));
	tcase_add_test(tc, test_v2_kill_watch);
	tcase_add_test(tc, test_v1_populated_kill);
	tcase_add_test(tc, test_no_kubelet);
	suite_add_tcase(s, tc);
	return (s);
}
