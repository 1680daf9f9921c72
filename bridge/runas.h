#ifndef RUNAS_H
#define RUNAS_H
/*
 * The owner of a job from js's user-id and group-id: sets *uid and *gid
 * (left as they are for what js does not name).  0, or -1 with a message
 * naming the annotation in err.  Reads the host's user database; owns
 * nothing.
 */
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

struct jobspec;

int runas_resolve(const struct jobspec *js, uint32_t *uid, uint32_t *gid,
    char *err, size_t errlen);

/* The calling thread's IDs before runas_assume. */
struct runas_ids {
	uid_t ruid, euid;
	gid_t rgid, egid;
};

/*
 * Makes uid/gid the calling thread's real and effective IDs (that thread
 * only), keeping the old ones in *saved.  0, or -1 with errno (EPERM
 * without CAP_SETUID/CAP_SETGID) and nothing changed.
 */
int runas_assume(uint32_t uid, uint32_t gid, struct runas_ids *saved);
/* Back to *saved; cannot fail while the saved IDs are the process's own. */
void runas_revert(const struct runas_ids *saved);
/*
 * Run as root, drops the supplementary groups it was started with, so a
 * thread that assumes a job owner's IDs has that owner's group and no
 * other (main, before any thread).  0, or -1 with errno.
 */
int runas_drop_groups(void);
#endif
