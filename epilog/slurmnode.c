/*
 * The Slurm node, as both node epilogs act on it (slurmnode.h).
 */
#include <sys/wait.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "slurmnode.h"

int
slurmnode_scontrol(const char *scontrol, ...)
{
	char	   *argv[8];
	const char *a;
	va_list	    ap;
	pid_t	    pid;
	int	    status = 0, rc, n = 1;

	if ((pid = fork()) == -1)
		return (-1);
	if (pid == 0) {
		argv[0] = strdup(scontrol);
		va_start(ap, scontrol);
		while (n < 7 && (a = va_arg(ap, const char *)) != NULL)
			argv[n++] = strdup(a);
		va_end(ap);
		argv[n] = NULL;
		execv(scontrol, argv);
		_exit(127);
	}
	while ((rc = waitpid(pid, &status, 0)) == -1 && errno == EINTR)
		;
	return (rc == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 ?
		0 :
		-1);
}

int
slurmnode_drain(const char *scontrol, const char *snode, const char *reason)
{
	char node[300], why[1000];

	snprintf(node, sizeof(node), "NodeName=%s", snode);
	snprintf(why, sizeof(why), "Reason=%s", reason);
	return (slurmnode_scontrol(scontrol, "update", node, "State=DRAIN", why,
	    (char *)NULL));
}

int
slurmnode_listed(const char *list, const char *item)
{
	size_t n = strlen(item);

	for (; list != NULL && *list != '\0'; list = strchr(list, ',')) {
		if (*list == ',')
			list++;
		if (strncmp(list, item, n) == 0 &&
		    (list[n] == ',' || list[n] == '\0'))
			return (1);
	}
	return (0);
}
