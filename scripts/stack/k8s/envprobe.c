/*
 * envprobe: prints the environment variables whose names start with the
 * prefixes given as arguments (all of them with none), then waits for
 * SIGTERM.  The DRA node test's container: what a device driver's CDI spec
 * put into the container's environment, read from inside it.  With
 * ENVPROBE_IGNORE_TERM set it installs no handler: as a container's PID 1
 * it then ignores SIGTERM, and only SIGKILL stops it (the handoff test's
 * container that outlives its grace period).
 */
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static volatile sig_atomic_t stop;

static void
onterm(int sig)
{
	(void)sig;
	stop = 1;
}

int
main(int argc, char *argv[])
{
	char **e;
	int    i, want;

	for (e = environ; *e != NULL; e++) {
		want = argc == 1;
		for (i = 1; i < argc && !want; i++)
			want = strncmp(*e, argv[i], strlen(argv[i])) == 0;
		if (want)
			printf("%s\n", *e);
	}
	fflush(stdout);
	if (getenv("ENVPROBE_IGNORE_TERM") == NULL)
		signal(SIGTERM, onterm);
	while (!stop)
		pause();
	return (0);
}
