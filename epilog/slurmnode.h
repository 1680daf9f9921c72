/*
 * What both node epilogs (main.c, api.c) do to and with the Slurm node
 * (slurmnode.c): run scontrol by its absolute path, drain the node, and
 * read the comma lists slurmd's environment holds.  Only libc.
 */
#ifndef EPILOG_SLURMNODE_H
#define EPILOG_SLURMNODE_H

/*
 * Runs scontrol (an absolute path: slurmd sets no PATH) with up to six
 * arguments and a NULL: 0 if it exited 0, else -1.
 */
int slurmnode_scontrol(const char *scontrol, ...);

/* Drains Slurm node snode with reason: 0 or -1. */
int slurmnode_drain(const char *scontrol, const char *snode,
    const char *reason);

/* Is item one of the comma-separated list's (NULL: none)? */
int slurmnode_listed(const char *list, const char *item);

#endif
