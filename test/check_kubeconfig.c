/* kubeconfig loading: contexts, files, inline data, tokens, refusals. */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "../libk8s/internal.h"
#include "check_suites.h"
#include "check_util.h"

#define KC TEST_DATA "/kubeconfig/kubeconfig.yaml"

START_TEST(test_config_current_context)
{
	struct k8s_error   err;
	struct k8s_config *c = k8s_config_load(KC, NULL, &err);

	ck_assert_msg(c != NULL, "%s", err.text);
	ck_assert_str_eq(k8s_config_server(c), "https://127.0.0.1:6443");
	ck_assert_str_eq(k8s_config_namespace(c), "default");
	ck_assert_str_eq(c->ca_file, TEST_DATA "/kubeconfig/pki/ca.crt");
	ck_assert_str_eq(c->cert_file, TEST_DATA "/kubeconfig/pki/admin.crt");
	ck_assert_str_eq(c->key_file, "/abs/admin.key");
	ck_assert_ptr_null(c->token);
	ck_assert_int_eq(c->insecure, 0);
	k8s_config_free(c);
}
END_TEST

/* A copy of file with the given mode, in a fresh path (to unlink). */
static void
copy_mode(const char *file, mode_t mode, char *path, size_t len)
{
	char  *data;
	size_t n;

	snprintf(path, len, "/tmp/check-kubeconfig-XXXXXX");
	data = check_slurp(file, &n);
	check_tmpfile(path, data, n, mode);
	free(data);
}

START_TEST(test_config_named_context_inline)
{
	struct k8s_error   err;
	struct k8s_config *c;
	char		   kc[64];

	/* Inline credentials: readable by the owner only. */
	copy_mode(KC, 0600, kc, sizeof(kc));
	c = k8s_config_load(kc, "robot@other", &err);
	unlink(kc);

	ck_assert_msg(c != NULL, "%s", err.text);
	ck_assert_str_eq(k8s_config_server(c), "https://10.1.2.3:443");
	ck_assert_str_eq(k8s_config_namespace(c), "team-a");
	ck_assert_str_eq(c->ca_pem, "-----BEGIN CERTIFICATE-----\n");
	ck_assert_uint_eq(c->cert_len, 4);
	ck_assert_str_eq(c->cert_pem, "cert");
	ck_assert_str_eq(c->key_pem, "key");
	ck_assert_str_eq(c->token, "s3cr3t");
	ck_assert_int_eq(c->insecure, 1);
	k8s_config_free(c);
}
END_TEST

static const struct {
	const char *file;
	const char *context;
	const char *text; /* substring of the error */
} bad[] = {
	{ KC, "nope", "context \"nope\" not found" },
	{ KC, "broken", "cluster not found" },
	{ TEST_DATA "/kubeconfig/bad-base64.yaml", NULL, "not base64" },
	{ TEST_DATA "/kubeconfig/bad-yaml.yaml", NULL, "line" },
	{ TEST_DATA "/kubeconfig/missing.yaml", NULL, "No such file" },
};

START_TEST(test_config_refusals)
{
	struct k8s_error   err;
	struct k8s_config *c;

	memset(&err, 0, sizeof(err));
	c = k8s_config_load(bad[_i].file, bad[_i].context, &err);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err.text, bad[_i].text) != NULL,
	    "%s: error \"%s\" lacks \"%s\"", bad[_i].file, err.text,
	    bad[_i].text);
}
END_TEST

/* A kubeconfig with one context and no credentials. */
#define KC_MIN \
	"current-context: c\n" \
	"clusters:\n" \
	"- name: x\n" \
	"  cluster: {server: \"https://h\"}\n" \
	"contexts:\n" \
	"- name: c\n" \
	"  context: {cluster: x}\n"

/*
 * How the YAML itself is read: the messages, the first document only, a
 * document that is only an alias passed over as empty, 64 levels.
 */
static const struct {
	const char *text;
	const char *err;   /* the whole error; NULL: loads */
	int	    named; /* the error starts with "PATH: " */
} yaml[] = {
	{ KC_MIN, NULL, 0 },
	{ "", "empty file", 1 },
	{ "# nothing\n", "empty file", 1 },
	{ "*x\n", "empty file", 1 },
	{ "--- *x\n---\n" KC_MIN, NULL, 0 },
	{ KC_MIN "---\nfoo: *bar\n---\n[a]: b\n", NULL, 0 },
	{ KC_MIN "---\nfoo: [\n", "line 10: did not find expected node content",
	    0 },
	{ "a: &x 1\nb: *x\n", "line 2: YAML aliases are not supported", 0 },
	{ "[a]: b\n", "line 1: mapping key is not a scalar", 0 },
	{ "a: [\n", "line 2: did not find expected node content", 0 },
	{ "---\n", "no current-context and none chosen", 1 },
};

/* Loads text from a new file, named in path (removed again). */
static struct k8s_config *
load_text(const char *text, char *path, size_t len, struct k8s_error *err)
{
	struct k8s_config *c;

	snprintf(path, len, "/tmp/check-kubeconfig-XXXXXX");
	check_tmpfile(path, text, strlen(text), 0600);
	memset(err, 0, sizeof(*err));
	c = k8s_config_load(path, NULL, err);
	unlink(path);
	return (c);
}

START_TEST(test_config_yaml)
{
	struct k8s_error   err;
	struct k8s_config *c;
	char		   kc[64], want[256];

	c = load_text(yaml[_i].text, kc, sizeof(kc), &err);
	if (yaml[_i].err == NULL) {
		ck_assert_msg(c != NULL, "case %d: %s", _i, err.text);
		ck_assert_str_eq(k8s_config_server(c), "https://h");
		k8s_config_free(c);
		return;
	}
	ck_assert_msg(c == NULL, "case %d loaded", _i);
	snprintf(want, sizeof(want), "%s%s%s", yaml[_i].named ? kc : "",
	    yaml[_i].named ? ": " : "", yaml[_i].err);
	ck_assert_msg(strcmp(err.text, want) == 0,
	    "case %d: got \"%s\", want \"%s\"", _i, err.text, want);
}
END_TEST

/* Nesting: 64 levels below the top are read, 65 are refused. */
START_TEST(test_config_yaml_depth)
{
	struct k8s_error   err;
	struct k8s_config *c;
	char		   kc[64], text[512], lb[80], rb[80];
	int		   n;

	for (n = 64; n <= 65; n++) {
		memset(lb, '[', n);
		memset(rb, ']', n);
		snprintf(text, sizeof(text), "%sx: %.*s%.*s\n", KC_MIN, n, lb,
		    n, rb);
		c = load_text(text, kc, sizeof(kc), &err);
		if (n == 64) {
			ck_assert_msg(c != NULL, "%d levels: %s", n, err.text);
			k8s_config_free(c);
		} else {
			ck_assert_ptr_null(c);
			ck_assert_str_eq(err.text, "nesting too deep");
		}
	}
}
END_TEST

/* Credentials others could read or rewrite are refused. */
START_TEST(test_config_permissions)
{
	static const struct {
		mode_t	    mode;
		const char *context;
		const char *text; /* NULL: accepted */
	} m[] = {
		{ 0644, "robot@other",
		    "mode 0644: it holds credentials, so "
		    "it must not be readable by others (chmod 600 it)" },
		{ 0604, "robot@other", "must not be readable" },
		{ 0640, "robot@other", NULL },
		{ 0664, NULL,
		    "mode 0664: it holds credentials, so it must "
		    "not be writable by others" },
		{ 0646, NULL, "must not be writable" },
		/* No inline secret in that context: readable is fine. */
		{ 0644, NULL, NULL },
	};
	struct k8s_error   err;
	struct k8s_config *c;
	char		   kc[64];
	size_t		   i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		copy_mode(KC, m[i].mode, kc, sizeof(kc));
		memset(&err, 0, sizeof(err));
		c = k8s_config_load(kc, m[i].context, &err);
		unlink(kc);
		if (m[i].text == NULL)
			ck_assert_msg(c != NULL, "mode %o: %s", m[i].mode,
			    err.text);
		else {
			ck_assert_msg(c == NULL, "mode %o accepted", m[i].mode);
			ck_assert_msg(strstr(err.text, m[i].text) != NULL &&
				strstr(err.text, "kubeconfig /tmp/check-") !=
				    NULL,
			    "mode %o: \"%s\"", m[i].mode, err.text);
		}
		k8s_config_free(c);
	}
}
END_TEST

/*
 * Who may replace the credentials: a kubeconfig owned by another user, or
 * in a directory others may write (not sticky), is refused.  (The owner
 * case needs root to chown; as another user it is not checked.)
 */
START_TEST(test_config_owner)
{
	struct k8s_error   err;
	struct k8s_config *c;
	char		   dir[64], kc[128], *data;
	size_t		   n;

	snprintf(dir, sizeof(dir), "/tmp/check-kcdir-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(kc, sizeof(kc), "%s/kubeconfig", dir);
	data = check_slurp(KC, &n);
	{
		FILE *f = fopen(kc, "w");

		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(data, 1, n, f), n);
		fclose(f);
	}
	free(data);
	ck_assert_int_eq(chmod(kc, 0600), 0);
	ck_assert_int_eq(chmod(dir, 0777), 0);
	memset(&err, 0, sizeof(err));
	c = k8s_config_load(kc, "robot@other", &err);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err.text, "is in directory") != NULL &&
		strstr(err.text, "others could replace it") != NULL,
	    "%s", err.text);
	ck_assert_int_eq(chmod(dir, 01777), 0);
	c = k8s_config_load(kc, "robot@other", &err);
	ck_assert_msg(c != NULL, "sticky: %s", err.text);
	k8s_config_free(c);
	ck_assert_int_eq(chmod(dir, 0700), 0);
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(kc, 65534, 65534), 0);
		c = k8s_config_load(kc, "robot@other", &err);
		ck_assert_ptr_null(c);
		ck_assert_msg(strstr(err.text, "is owned by uid 65534") != NULL,
		    "%s", err.text);
	}
	unlink(kc);
	rmdir(dir);
}
END_TEST

START_TEST(test_config_urlencode)
{
	char *s = k8s_urlencode("spec.schedulerName=slurm-bridge,a!=b");

	ck_assert_str_eq(s, "spec.schedulerName%3Dslurm-bridge%2Ca%21%3Db");
	free(s);
}
END_TEST

Suite *
kubeconfig_suite(void)
{
	Suite *s = suite_create("kubeconfig");
	TCase *tc = tcase_create("kubeconfig");

	tcase_add_test(tc, test_config_current_context);
	tcase_add_test(tc, test_config_named_context_inline);
	tcase_add_test(tc, test_config_permissions);
	tcase_add_test(tc, test_config_owner);
	tcase_add_loop_test(tc, test_config_refusals, 0,
	    sizeof(bad) / sizeof(bad[0]));
	tcase_add_loop_test(tc, test_config_yaml, 0,
	    (int)(sizeof(yaml) / sizeof(yaml[0])));
	tcase_add_test(tc, test_config_yaml_depth);
	tcase_add_test(tc, test_config_urlencode);
	suite_add_tcase(s, tc);
	return (s);
}
