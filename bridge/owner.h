#ifndef OWNER_H
#define OWNER_H
/*
 * The owner of a job from js's user-id and group-id: sets *uid and *gid
 * (left as they are for what js does not name).  0, or -1 with a message
 * naming the annotation in err.  Reads the host's user database; owns
 * nothing.
 */
#include <stddef.h>
#include <stdint.h>

struct jobspec;

int	owner_resolve(const struct jobspec *js, uint32_t *uid, uint32_t *gid,
	    char *err, size_t errlen);
#endif
