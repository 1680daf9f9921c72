/*
 * Per-namespace bounds on what a pod may ask of Slurm: the accounts,
 * partitions, QOS, reservations, job owners and priority range a namespace
 * allows.  A cluster admin sets them as annotations on the Namespace
 * (which a namespace's own users cannot edit); the config's bounds cover
 * the keys a namespace does not set.  Both daemons check the same rule:
 * the webhook on admission, the scheduler before it submits (translate.c
 * calls bounds_check), so a pod that bypassed the webhook stays Pending
 * with the webhook's message.  Pure: no I/O.
 */
#ifndef BOUNDS_H
#define BOUNDS_H

#include <stdint.h>

#include <jansson.h>

/* The Namespace annotations (cluster admins set them; pods cannot). */
#define ANN_ALLOWED_ACCOUNTS   "scheduler.slinky.slurm.net/allowed-accounts"
#define ANN_ALLOWED_PARTITIONS "scheduler.slinky.slurm.net/allowed-partitions"
#define ANN_ALLOWED_QOS	       "scheduler.slinky.slurm.net/allowed-qos"
#define ANN_ALLOWED_RESERVATIONS \
	"scheduler.slinky.slurm.net/allowed-reservations"
#define ANN_ALLOWED_USERS    "scheduler.slinky.slurm.net/allowed-users"
#define ANN_ALLOWED_GROUPS   "scheduler.slinky.slurm.net/allowed-groups"
#define ANN_ALLOWED_PRIORITY "scheduler.slinky.slurm.net/allowed-priority"

/* Owners below this id are refused unless a namespace lists them. */
#define BOUNDS_MIN_UID	  1000
#define BOUNDS_SLURM_USER "slurm"

/*
 * The config's bounds, for namespaces without the annotation.  Lists are
 * comma-separated (owned); NULL allows any value.  priority is "MIN-MAX"
 * or "N"; NULL allows no priority at all.
 */
struct bounds {
	char	*accounts;
	char	*partitions;
	char	*qos;
	char	*reservations;
	char	*users;
	char	*groups;
	char	*priority;
	uint32_t min_uid;    /* BOUNDS_MIN_UID unless configured */
	char	*slurm_user; /* never an owner; BOUNDS_SLURM_USER */
};

struct jobspec;

/* The built-in bounds: min_uid 1000, Slurm user "slurm", the rest open. */
void bounds_init(struct bounds *);
void bounds_cleanup(struct bounds *);
/* Is s a priority range ("N" or "MIN-MAX", 1 to 2147483646)? */
int bounds_range_valid(const char *s);

/*
 * Checks js (translated for a pod of namespace ns, whose Namespace object
 * nsobj may be NULL) against nsobj's annotations, else defaults (NULL: the
 * built-in ones).  Records in js what bounds_check_ids needs later.  0, or
 * -1 with a message naming the annotation, the value and what is allowed.
 */
int bounds_check(const struct bounds *defaults, const json_t *nsobj,
    const char *ns, struct jobspec *js, char *err, size_t errlen);
/*
 * A job as Slurm holds it now (its owner may have changed these with
 * scontrol update while it waits) against namespace ns's bounds, as
 * bounds_check judged them at submit.  0, or -1 with a message that names
 * the field, the value and what is allowed.
 */
int bounds_check_job(const struct bounds *defaults, const json_t *nsobj,
    const char *ns, const char *partition, const char *account, const char *qos,
    char *err, size_t errlen);
/*
 * The owner as resolved on the scheduler's host (a user or group named
 * by a name is only known there): never root or the Slurm user
 * (slurm_uid), and no uid below js's minimum unless a namespace listed
 * the user.  0, or -1 with the message.
 */
int bounds_check_ids(const struct jobspec *js, uint32_t uid, uint32_t gid,
    uint32_t slurm_uid, char *err, size_t errlen);

#endif /* BOUNDS_H */
