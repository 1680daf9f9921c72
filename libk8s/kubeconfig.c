/*
 * Client configuration: kubeconfig files (read by yamldoc.c, as JSON) and
 * the in-cluster service-account mount.  Runs on the caller's
 * thread at startup; the result is read-only afterwards and may be shared by
 * every client.
 */
#include <sys/stat.h>

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "yamldoc.h"

#define SA_DIR	     "/var/run/secrets/kubernetes.io/serviceaccount"
#define KC_MAX_DEPTH 64

/* Finds the entry called name in a kubeconfig list and returns its field. */
static json_t *
kc_find(json_t *root, const char *list, const char *name, const char *field)
{
	json_t *arr, *ent;
	size_t	i;

	if ((arr = json_object_get(root, list)) == NULL)
		return (NULL);
	json_array_foreach (arr, i, ent) {
		const char *n = json_string_value(json_object_get(ent, "name"));
		if (n != NULL && strcmp(n, name) == 0)
			return (json_object_get(ent, field));
	}
	return (NULL);
}

/*
 * The file as JSON, or NULL with err set.  Only the first document counts;
 * a document that is only an alias is skipped as if empty.
 */
static json_t *
kc_read(const char *path, struct k8s_error *err)
{
	struct yamldoc_node *doc;
	struct yamldoc_error yerr;
	json_t		    *root;

	if ((doc = yamldoc_load(path, KC_MAX_DEPTH, 0, &yerr)) != NULL) {
		root = yamldoc_json(doc);
		yamldoc_free(doc);
		return (root);
	}
	switch (yerr.what) {
	case YAMLDOC_ERR_OPEN:
		error_set(err, 0, "NotFound", "%s: %s", path,
		    strerror(yerr.errnum));
		break;
	case YAMLDOC_ERR_EMPTY:
		error_set(err, 0, "BadKubeconfig", "%s: empty file", path);
		break;
	case YAMLDOC_ERR_SYNTAX:
		error_set(err, 0, "BadKubeconfig", "line %zu: %s", yerr.line,
		    yerr.problem != NULL ? yerr.problem : "YAML syntax error");
		break;
	case YAMLDOC_ERR_DEPTH:
		error_set(err, 0, "BadKubeconfig", "nesting too deep");
		break;
	case YAMLDOC_ERR_ALIAS:
		error_set(err, 0, "BadKubeconfig",
		    "line %zu: YAML aliases are not supported", yerr.line);
		break;
	case YAMLDOC_ERR_KEY:
		error_set(err, 0, "BadKubeconfig",
		    "line %zu: mapping key is not a scalar", yerr.line);
		break;
	case YAMLDOC_ERR_DOCS: /* only under YAMLDOC_ONE_DOC */
		error_set(err, 0, "BadKubeconfig",
		    "line %zu: a second document", yerr.line);
		break;
	}
	return (NULL);
}

/* A path from a kubeconfig, made absolute against the file's directory. */
static char *
kc_path(const char *dir, const char *p)
{
	char *s;

	if (p == NULL || *p == '\0')
		return (NULL);
	if (p[0] == '/')
		return (xstrdup(p));
	xasprintf(&s, "%s/%s", dir, p);
	return (s);
}

static int
kc_data(json_t *obj, const char *key, char **out, size_t *len,
    struct k8s_error *err)
{
	const char *s = json_string_value(json_object_get(obj, key));

	if (s == NULL)
		return (0);
	if (k8s_base64_decode(s, out, len) == -1) {
		error_set(err, 0, "BadKubeconfig", "%s is not base64", key);
		return (-1);
	}
	return (0);
}

/*
 * Refuses a credential file others could rewrite (group or world writable:
 * they could point us at their server, or swap the key), or read (world
 * readable, when secret holds: it has a key or a token).  A file that does
 * not exist is left to whoever opens it.
 */
int
k8s_file_check_perms(const char *path, const char *what, int secret,
    struct k8s_error *err)
{
	struct stat st;

	if (path == NULL || stat(path, &st) == -1)
		return (0);
	if (!S_ISREG(st.st_mode)) {
		error_set(err, 0, "BadPermissions",
		    "%s %s is not a regular "
		    "file",
		    what, path);
		return (-1);
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 ||
	    (secret && (st.st_mode & S_IROTH) != 0)) {
		error_set(err, 0, "BadPermissions",
		    "%s %s has mode %04o: "
		    "it holds credentials, so it must not be %s by others "
		    "(chmod 600 it)",
		    what, path, (unsigned)(st.st_mode & 07777),
		    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 ? "writable" :
							      "readable");
		return (-1);
	}
	return (0);
}

/*
 * Who may replace the kubeconfig: its owner, and whoever may write its
 * directory.  Refused unless the owner is root or this process's user,
 * and the directory is not writable by group or others (but for a sticky
 * one, such as /tmp, where only the owner may replace the file).
 */
static int
kc_check_owner(const char *path, struct k8s_error *err)
{
	struct stat st;
	char	   *dir, *slash;
	int	    rc = 0;

	if (stat(path, &st) == -1)
		return (0);
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		error_set(err, 0, "BadPermissions",
		    "kubeconfig %s is owned by uid %u: it must be root's or "
		    "this process's user's (uid %u), since its owner can "
		    "rewrite the credentials (chown it)",
		    path, (unsigned)st.st_uid, (unsigned)geteuid());
		return (-1);
	}
	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) == NULL)
		snprintf(dir, strlen(dir) + 1, ".");
	else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &st) == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
	    (st.st_mode & S_ISVTX) == 0) {
		error_set(err, 0, "BadPermissions",
		    "kubeconfig %s is in directory %s of mode %04o: others "
		    "could replace it (chmod go-w the directory)",
		    path, dir, (unsigned)(st.st_mode & 07777));
		rc = -1;
	}
	free(dir);
	return (rc);
}

struct k8s_config *
k8s_config_load(const char *path, const char *context, struct k8s_error *err)
{
	struct k8s_config *c = NULL;
	json_t		  *root, *ctx, *cl, *user;
	const char	  *s, *cname, *uname;
	char		  *tmp = NULL, *dir;

	if ((root = kc_read(path, err)) == NULL)
		return (NULL);
	if (context == NULL)
		context = json_string_value(
		    json_object_get(root, "current-context"));
	if (context == NULL || *context == '\0') {
		error_set(err, 0, "BadKubeconfig",
		    "%s: no current-context and none chosen", path);
		goto fail;
	}
	if ((ctx = kc_find(root, "contexts", context, "context")) == NULL) {
		error_set(err, 0, "BadKubeconfig",
		    "%s: context \"%s\" not found", path, context);
		goto fail;
	}
	cname = json_string_value(json_object_get(ctx, "cluster"));
	uname = json_string_value(json_object_get(ctx, "user"));
	if (cname == NULL ||
	    (cl = kc_find(root, "clusters", cname, "cluster")) == NULL) {
		error_set(err, 0, "BadKubeconfig",
		    "%s: context \"%s\": cluster not found", path, context);
		goto fail;
	}
	user = uname != NULL ? kc_find(root, "users", uname, "user") : NULL;

	tmp = xstrdup(path);
	dir = dirname(tmp);
	c = xcalloc(1, sizeof(*c));
	if ((s = json_string_value(json_object_get(cl, "server"))) == NULL ||
	    *s == '\0') {
		error_set(err, 0, "BadKubeconfig",
		    "%s: cluster \"%s\" has no server", path, cname);
		goto fail;
	}
	c->server = xstrdup(s);
	while (strlen(c->server) > 0 && c->server[strlen(c->server) - 1] == '/')
		c->server[strlen(c->server) - 1] = '\0';
	s = json_string_value(json_object_get(ctx, "namespace"));
	c->ns = xstrdup(s != NULL && *s != '\0' ? s : "default");
	c->ca_file = kc_path(dir,
	    json_string_value(json_object_get(cl, "certificate-authority")));
	if (kc_data(cl, "certificate-authority-data", &c->ca_pem, &c->ca_len,
		err) == -1)
		goto fail;
	s = json_string_value(json_object_get(cl, "insecure-skip-tls-verify"));
	c->insecure = s != NULL && strcmp(s, "true") == 0;
	if (user != NULL) {
		c->cert_file = kc_path(dir,
		    json_string_value(
			json_object_get(user, "client-certificate")));
		c->key_file = kc_path(dir,
		    json_string_value(json_object_get(user, "client-key")));
		if (kc_data(user, "client-certificate-data", &c->cert_pem,
			&c->cert_len, err) == -1 ||
		    kc_data(user, "client-key-data", &c->key_pem, &c->key_len,
			err) == -1)
			goto fail;
		if ((s = json_string_value(json_object_get(user, "token"))) !=
		    NULL)
			c->token = xstrdup(s);
		c->token_file = kc_path(dir,
		    json_string_value(json_object_get(user, "tokenFile")));
	}
	if (k8s_file_check_perms(path, "kubeconfig",
		c->key_pem != NULL || c->token != NULL, err) == -1 ||
	    kc_check_owner(path, err) == -1 ||
	    k8s_file_check_perms(c->key_file, "client key", 1, err) == -1 ||
	    k8s_file_check_perms(c->token_file, "token file", 1, err) == -1)
		goto fail;
	free(tmp);
	json_decref(root);
	return (c);
fail:
	free(tmp);
	json_decref(root);
	k8s_config_free(c);
	return (NULL);
}

struct k8s_config *
k8s_config_incluster(struct k8s_error *err)
{
	struct k8s_config *c;
	const char	  *host, *port;
	char		   ns[256];
	FILE		  *fp;

	host = getenv("KUBERNETES_SERVICE_HOST");
	port = getenv("KUBERNETES_SERVICE_PORT");
	if (host == NULL || port == NULL ||
	    access(SA_DIR "/token", R_OK) == -1) {
		error_set(err, 0, "NotInCluster",
		    "KUBERNETES_SERVICE_HOST/_PORT or %s/token missing",
		    SA_DIR);
		return (NULL);
	}
	c = xcalloc(1, sizeof(*c));
	if (strchr(host, ':') != NULL)
		xasprintf(&c->server, "https://[%s]:%s", host, port);
	else
		xasprintf(&c->server, "https://%s:%s", host, port);
	c->ca_file = xstrdup(SA_DIR "/ca.crt");
	c->token_file = xstrdup(SA_DIR "/token");
	c->ns = NULL;
	if ((fp = fopen(SA_DIR "/namespace", "r")) != NULL) {
		if (fgets(ns, sizeof(ns), fp) != NULL) {
			ns[strcspn(ns, "\r\n")] = '\0';
			c->ns = xstrdup(ns);
		}
		fclose(fp);
	}
	if (c->ns == NULL)
		c->ns = xstrdup("default");
	return (c);
}

struct k8s_config *
k8s_config_default(const char *path, struct k8s_error *err)
{
	const char	  *env, *home;
	char		  *p;
	struct k8s_config *c;

	if (path != NULL && *path != '\0')
		return (k8s_config_load(path, NULL, err));
	if ((env = getenv("KUBECONFIG")) != NULL && *env != '\0')
		return (k8s_config_load(env, NULL, err));
	if ((c = k8s_config_incluster(err)) != NULL)
		return (c);
	if ((home = getenv("HOME")) == NULL) {
		error_set(err, 0, "NoConfig", "no kubeconfig found");
		return (NULL);
	}
	xasprintf(&p, "%s/.kube/config", home);
	c = k8s_config_load(p, NULL, err);
	free(p);
	return (c);
}

void
k8s_config_free(struct k8s_config *c)
{
	if (c == NULL)
		return;
	free(c->server);
	free(c->ns);
	free(c->ca_file);
	free(c->ca_pem);
	free(c->cert_file);
	free(c->key_file);
	free(c->cert_pem);
	if (c->key_pem != NULL)
		explicit_bzero(c->key_pem, c->key_len);
	free(c->key_pem);
	if (c->token != NULL)
		explicit_bzero(c->token, strlen(c->token));
	free(c->token);
	free(c->token_file);
	free(c);
}

const char *
k8s_config_server(const struct k8s_config *c)
{
	return (c->server);
}

const char *
k8s_config_namespace(const struct k8s_config *c)
{
	return (c->ns);
}
