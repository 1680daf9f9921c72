/*
 * runas.c: the Unix owner a placeholder job runs as, from the user-id and
 * group-id annotations (a number or a name each), resolved on the
 * scheduler's host; and, for Slurm 23.11 and later, which take a job's
 * owner from the caller's credential, the owner's identity on the calling
 * thread for the length of one request.  Apart from the slurm*.c files
 * because <grp.h>'s struct group would clash with the bridge's own.  Runs
 * on the submit threads (sctl_submit), each changing its own identity
 * only.
 *
 * Threads: submit.
 */
#include <sys/syscall.h>
#include <sys/types.h>

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "xmalloc.h"

#include "policy.h"
#include "runas.h"

/* The largest group entry (its member list) runas_resolve reads. */
#define RUNAS_GRBUF_MAX (1024 * 1024)

/*
 * Why name (a user or a group: what, of annotation key) is not usable:
 * getpwnam_r/getgrnam_r failed (the directory unreachable, the entry too
 * large), or found no such name.  POSIX lets "not found" be any of
 * ENOENT, ESRCH, EBADF, EPERM or 0 (getpwnam_r(3)).
 */
static void
runas_not_found(char *err, size_t errlen, const char *key, const char *what,
    const char *name, int rc)
{
	if (rc != 0 && rc != ENOENT && rc != ESRCH && rc != EBADF &&
	    rc != EPERM)
		snprintf(err, errlen,
		    "annotation " ANN_PREFIX "%s: looking up \"%s\" on the "
		    "scheduler's host: %s",
		    key, name, strerror(rc));
	else
		snprintf(err, errlen,
		    "annotation " ANN_PREFIX "%s: no %s \"%s\" on the "
		    "scheduler's host",
		    key, what, name);
}

/*
 * The job's owner from user-id and group-id, each a number or a name
 * (resolved here, on the scheduler's host: the webhook checks only the
 * form).  A user without a group-id gets the user's primary group.
 * On entry *uid and *gid are the defaults (the scheduler's own).
 * Slurm up to 23.02 honours user_id/group_id in the request when the
 * caller is root or SlurmUser; from 23.11 it takes the owner from the
 * caller's credential instead (see docs/admins/releases.md).
 */
int
runas_resolve(const struct jobspec *js, uint32_t *uid, uint32_t *gid, char *err,
    size_t errlen)
{
	struct passwd pw, *pwp = NULL;
	struct group  gr, *grp = NULL;
	char	      buf[4096], *gbuf = NULL;
	size_t	      glen;
	int	      rc;

	if (js->has_user_id) {
		if (js->user_name != NULL)
			rc = getpwnam_r(js->user_name, &pw, buf, sizeof(buf),
			    &pwp);
		else
			rc = getpwuid_r(js->user_id, &pw, buf, sizeof(buf),
			    &pwp);
		if (pwp == NULL && js->user_name != NULL) {
			runas_not_found(err, errlen, "user-id", "user",
			    js->user_name, rc);
			return (-1);
		}
		*uid = pwp != NULL ? pwp->pw_uid : js->user_id;
		if (!js->has_group_id) {
			if (pwp == NULL) {
				snprintf(err, errlen,
				    "annotation " ANN_PREFIX
				    "user-id: user %u has no account on the "
				    "scheduler's host: give " ANN_PREFIX
				    "group-id too",
				    js->user_id);
				return (-1);
			}
			*gid = pwp->pw_gid;
		}
	}
	if (js->has_group_id) {
		if (js->group_name != NULL) {
			/* A group lists its members: grow the buffer to fit. */
			for (glen = 4096;; glen *= 2) {
				gbuf = xreallocarray(gbuf, 1, glen);
				rc = getgrnam_r(js->group_name, &gr, gbuf, glen,
				    &grp);
				if (rc != ERANGE || glen >= RUNAS_GRBUF_MAX)
					break;
			}
			if (grp == NULL) {
				runas_not_found(err, errlen, "group-id",
				    "group", js->group_name, rc);
				free(gbuf);
				return (-1);
			}
			*gid = grp->gr_gid;
			free(gbuf);
		} else
			*gid = js->group_id;
	}
	return (0);
}

/* The 32-bit-ID calls where the plain ones take 16-bit IDs (i386, arm). */
#ifdef SYS_setresuid32
#define RUNAS_SYS_SETRESUID SYS_setresuid32
#define RUNAS_SYS_SETRESGID SYS_setresgid32
#else
#define RUNAS_SYS_SETRESUID SYS_setresuid
#define RUNAS_SYS_SETRESGID SYS_setresgid
#endif

/*
 * The raw system calls change the calling thread's credentials only
 * (glibc's wrappers change every thread's).  The saved IDs stay the
 * process's own, which is what lets runas_revert() return to them.  Real
 * and effective IDs both change: munge reads the effective IDs of its
 * socket's peer, auth/slurm the real ones.
 */
int
runas_assume(uint32_t uid, uint32_t gid, struct runas_ids *saved)
{
	uid_t suid;
	gid_t sgid;

	if (getresuid(&saved->ruid, &saved->euid, &suid) == -1 ||
	    getresgid(&saved->rgid, &saved->egid, &sgid) == -1)
		return (-1);
	if (syscall(RUNAS_SYS_SETRESGID, (gid_t)gid, (gid_t)gid, (gid_t)-1) ==
	    -1)
		return (-1);
	if (syscall(RUNAS_SYS_SETRESUID, (uid_t)uid, (uid_t)uid, (uid_t)-1) ==
	    -1) {
		int e = errno;

		if (syscall(RUNAS_SYS_SETRESGID, saved->rgid, saved->egid,
			(gid_t)-1) == -1)
			fatal("%s: setresgid back", __func__);
		errno = e;
		return (-1);
	}
	return (0);
}

void
runas_revert(const struct runas_ids *saved)
{
	/* The user first: it brings back the right to set the group. */
	if (syscall(RUNAS_SYS_SETRESUID, saved->ruid, saved->euid, (uid_t)-1) ==
	    -1)
		fatal("%s: setresuid", __func__);
	if (syscall(RUNAS_SYS_SETRESGID, saved->rgid, saved->egid, (gid_t)-1) ==
	    -1)
		fatal("%s: setresgid", __func__);
	/*
	 * A change of effective ID left the process non-dumpable: it stays
	 * so (no core file, no ptrace by a user), as it holds the munge
	 * socket's trust and the API server's credentials.
	 */
}

int
runas_drop_groups(void)
{
	/* Before any thread: glibc's setgroups changes every thread's. */
	if (geteuid() != 0)
		return (0);
	return (setgroups(0, NULL));
}
