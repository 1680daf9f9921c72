/*
 * Flag values for the admission server: the listen address and the TLS
 * files.  Runs on main's thread before the server starts.
 */
#include <arpa/inet.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "admission.h"

int
conf_parse_listen(const char *s, struct sockaddr_in *sin, char *err,
    size_t errlen)
{
	const char	*colon;
	char		 host[64], *end;
	long		 port;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	if ((colon = strrchr(s, ':')) == NULL ||
	    (size_t)(colon - s) >= sizeof(host))
		goto bad;
	memcpy(host, s, colon - s);
	host[colon - s] = '\0';
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || errno != 0 || port < 1 ||
	    port > 65535)
		goto bad;
	sin->sin_port = htons((uint16_t)port);
	if (host[0] == '\0')
		sin->sin_addr.s_addr = htonl(INADDR_ANY);
	else if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
		goto bad;
	return (0);
 bad:
	snprintf(err, errlen, "--listen: \"%s\" is not ADDR:PORT (e.g. "
	    "127.0.0.1:9443 or :9443)", s);
	return (-1);
}

char *
conf_read_file(const char *path, size_t max)
{
	FILE		*fp;
	struct stat	 st;
	char		*data;
	size_t		 n;

	if ((fp = fopen(path, "r")) == NULL)
		return (NULL);
	if (fstat(fileno(fp), &st) == -1 || st.st_size < 0 ||
	    (size_t)st.st_size > max) {
		fclose(fp);
		errno = EFBIG;
		return (NULL);
	}
	data = xmalloc((size_t)st.st_size + 1);
	n = fread(data, 1, (size_t)st.st_size, fp);
	fclose(fp);
	data[n] = '\0';
	return (data);
}
