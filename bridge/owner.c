/*
 * owner.c: the Unix owner of a placeholder job, from the user-id and
 * group-id annotations (a number or a name each), resolved on the
 * scheduler's host.  Apart from slurm.c because <grp.h>'s struct group
 * would clash with the bridge's own.
 */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <sys/types.h>

#include "policy.h"
#include "owner.h"

/*
 * The job's owner from user-id and group-id, each a number or a name
 * (resolved here, on the scheduler's host: the webhook checks only the
 * form).  A user without a group-id gets the user's primary group.
 * On entry *uid and *gid are the defaults (the scheduler's own).
 * Slurm up to 23.02 honours user_id/group_id in the request when the
 * caller is root or SlurmUser; from 23.11 it takes the owner from the
 * caller's credential instead (see the README, Slurm releases).
 */
int
owner_resolve(const struct jobspec *js, uint32_t *uid, uint32_t *gid,
    char *err, size_t errlen)
{
	struct passwd	 pw, *pwp = NULL;
	struct group	 gr, *grp = NULL;
	char		 buf[4096];

	if (js->has_user_id) {
		if (js->user_name != NULL)
			getpwnam_r(js->user_name, &pw, buf, sizeof(buf), &pwp);
		else
			getpwuid_r(js->user_id, &pw, buf, sizeof(buf), &pwp);
		if (pwp == NULL && js->user_name != NULL) {
			snprintf(err, errlen, "annotation " ANN_PREFIX
			    "user-id: no user \"%s\" on the scheduler's host",
			    js->user_name);
			return (-1);
		}
		*uid = pwp != NULL ? pwp->pw_uid : js->user_id;
		if (!js->has_group_id) {
			if (pwp == NULL) {
				snprintf(err, errlen, "annotation " ANN_PREFIX
				    "user-id: user %u has no account on the "
				    "scheduler's host: give " ANN_PREFIX
				    "group-id too", js->user_id);
				return (-1);
			}
			*gid = pwp->pw_gid;
		}
	}
	if (js->has_group_id) {
		if (js->group_name != NULL) {
			getgrnam_r(js->group_name, &gr, buf, sizeof(buf), &grp);
			if (grp == NULL) {
				snprintf(err, errlen, "annotation " ANN_PREFIX
				    "group-id: no group \"%s\" on the "
				    "scheduler's host", js->group_name);
				return (-1);
			}
			*gid = grp->gr_gid;
		} else
			*gid = js->group_id;
	}
	return (0);
}
