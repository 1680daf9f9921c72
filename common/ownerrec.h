/*
 * Owner records (ownerrec.c): what the scheduler and the webhook keep of a
 * workload object (a Job, JobSet, LeaderWorkerSet, PodGroup of either API,
 * or Workload) in place of the object: a new, small object of the same
 * shape holding only the fields the rules read (workload.c, translate.c,
 * the scheduler's PodGroup status writes and the webhook's PodGroup check),
 * so that each rule reads the record as it would the whole object.
 */
#ifndef OWNERREC_H
#define OWNERREC_H

#include <jansson.h>

#include "workload.h"

/*
 * The longest annotation value kept whole.  Every rule refuses a longer
 * one (a string holds at most 200 characters, a number at most 10 digits
 * after its leading zeros); a longer one is cut so that it is still
 * refused, with the same message.
 */
#define OWNERREC_MAX_VALUE 1024

/*
 * The record of obj, a workload object of kind: a new object (the
 * caller's), NULL only when obj is NULL.  obj is borrowed.
 */
json_t *ownerrec_dup(enum workload_kind kind, const json_t *obj);

#endif /* OWNERREC_H */
