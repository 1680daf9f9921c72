/*
 * slurm-bridge-admission: the HTTPS webhook server for pods.  main parses
 * flags, starts the server (libmicrohttpd runs it on its own thread) and
 * waits for SIGINT/SIGTERM with sigwait().
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>

#include "log.h"
#include "admission.h"

static void
usage(FILE *fp)
{
	fprintf(fp,
"usage: slurm-bridge-admission [options]\n"
"  --listen ADDR:PORT  HTTPS address (default :9443)    [ADMISSION_LISTEN]\n"
"  --tls-cert FILE     serving certificate (PEM)       [ADMISSION_TLS_CERT]\n"
"  --tls-key FILE      serving key (PEM)               [ADMISSION_TLS_KEY]\n"
"  -n                  check the configuration and exit\n"
"  -v                  more logging (repeatable)\n"
"  -h, --help          this text\n");
}

static const char *
env_or(const char *name, const char *def)
{
	const char	*v = getenv(name);

	return (v != NULL && *v != '\0' ? v : def);
}

int
main(int argc, char *argv[])
{
	static const struct option	 longopts[] = {
		{ "listen",	required_argument, NULL, 'l' },
		{ "tls-cert",	required_argument, NULL, 'c' },
		{ "tls-key",	required_argument, NULL, 'k' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL,		0,		   NULL, 0 }
	};
	struct admission_conf	 conf;
	struct server		*srv;
	char			 err[256];
	sigset_t		 set;
	int			 ch, sig, checkonly = 0;

	memset(&conf, 0, sizeof(conf));
	conf.listen = env_or("ADMISSION_LISTEN", ":9443");
	conf.tls_cert = env_or("ADMISSION_TLS_CERT", NULL);
	conf.tls_key = env_or("ADMISSION_TLS_KEY", NULL);
	conf.scheduler_name = env_or("ADMISSION_SCHEDULER_NAME", "slurm-bridge");
	while ((ch = getopt_long(argc, argv, "hnv", longopts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			conf.listen = optarg;
			break;
		case 'c':
			conf.tls_cert = optarg;
			break;
		case 'k':
			conf.tls_key = optarg;
			break;
		case 'n':
			checkonly = 1;
			break;
		case 'v':
			conf.verbose++;
			break;
		case 'h':
			usage(stdout);
			return (0);
		default:
			usage(stderr);
			return (2);
		}
	}
	log_init(conf.verbose);
	if (conf_parse_listen(conf.listen, &conf.addr, err, sizeof(err)) == -1)
		fatalx("%s", err);
	if (conf.tls_cert == NULL || conf.tls_key == NULL)
		fatalx("--tls-cert and --tls-key are required: the API server "
		    "calls webhooks over HTTPS only");
	if (checkonly) {
		/* A full start proves the certificate and key load. */
		if ((srv = server_start(&conf, err, sizeof(err))) == NULL)
			fatalx("%s", err);
		server_stop(srv);
		printf("configuration OK\n");
		return (0);
	}

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	if ((srv = server_start(&conf, err, sizeof(err))) == NULL)
		fatalx("%s", err);
	log_info("slurm-bridge-admission: serving https on %s", conf.listen);
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGINT || sig == SIGTERM)
			break;
	}
	log_info("slurm-bridge-admission: signal %d, stopping", sig);
	server_stop(srv);
	return (0);
}
