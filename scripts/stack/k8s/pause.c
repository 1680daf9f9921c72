/*
 * The pause program of the local stack's pod sandboxes: PID 1 of a pod's
 * shared namespaces, which it holds open while the pod lives.  It reaps
 * the orphans that are re-parented to it and ends on SIGINT or SIGTERM.
 * No registry is reachable here, so the stack builds its own pause image
 * from this (scripts/deploy/images.sh); it is the test stack's, not the
 * product's.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t done;

static void
pause_stop(int sig)
{
	(void)sig;
	done = 1;
}

static void
pause_reap(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int
main(void)
{
	struct sigaction sa = { 0 };

	if (getpid() != 1)
		fprintf(stderr, "pause: not PID 1; reaping only children\n");
	sa.sa_handler = pause_stop;
	if (sigaction(SIGINT, &sa, NULL) == -1 ||
	    sigaction(SIGTERM, &sa, NULL) == -1)
		return (1);
	sa.sa_handler = pause_reap;
	sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
	if (sigaction(SIGCHLD, &sa, NULL) == -1)
		return (1);
	while (!done)
		pause();
	return (0);
}
