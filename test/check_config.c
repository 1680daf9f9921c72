/* kubeconfig loading: contexts, files, inline data, tokens, refusals. */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "../libk8s/k8s_private.h"
#include "check_suites.h"

#define KC	TEST_DATA "/config/kubeconfig.yaml"

START_TEST(test_config_current_context)
{
	struct k8s_error	 err;
	struct k8s_config	*c = k8s_config_load(KC, NULL, &err);

	ck_assert_msg(c != NULL, "%s", err.text);
	ck_assert_str_eq(k8s_config_server(c), "https://127.0.0.1:6443");
	ck_assert_str_eq(k8s_config_namespace(c), "default");
	ck_assert_str_eq(c->ca_file, TEST_DATA "/config/pki/ca.crt");
	ck_assert_str_eq(c->cert_file, TEST_DATA "/config/pki/admin.crt");
	ck_assert_str_eq(c->key_file, "/abs/admin.key");
	ck_assert_ptr_null(c->token);
	ck_assert_int_eq(c->insecure, 0);
	k8s_config_free(c);
}
END_TEST

START_TEST(test_config_named_context_inline)
{
	struct k8s_error	 err;
	struct k8s_config	*c = k8s_config_load(KC, "robot@other", &err);

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
	const char	*file;
	const char	*context;
	const char	*text;		/* substring of the error */
} bad[] = {
	{ KC, "nope", "context \"nope\" not found" },
	{ KC, "broken", "cluster not found" },
	{ TEST_DATA "/config/bad-base64.yaml", NULL, "not base64" },
	{ TEST_DATA "/config/bad-yaml.yaml", NULL, "line" },
	{ TEST_DATA "/config/missing.yaml", NULL, "No such file" },
};

START_TEST(test_config_refusals)
{
	struct k8s_error	 err;
	struct k8s_config	*c;

	memset(&err, 0, sizeof(err));
	c = k8s_config_load(bad[_i].file, bad[_i].context, &err);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err.text, bad[_i].text) != NULL,
	    "%s: error \"%s\" lacks \"%s\"", bad[_i].file, err.text,
	    bad[_i].text);
}
END_TEST

START_TEST(test_config_urlencode)
{
	char	*s = k8s_urlencode("spec.schedulerName=slurm-bridge,a!=b");

	ck_assert_str_eq(s, "spec.schedulerName%3Dslurm-bridge%2Ca%21%3Db");
	free(s);
}
END_TEST

Suite *
config_suite(void)
{
	Suite	*s = suite_create("config");
	TCase	*tc = tcase_create("kubeconfig");

	tcase_add_test(tc, test_config_current_context);
	tcase_add_test(tc, test_config_named_context_inline);
	tcase_add_loop_test(tc, test_config_refusals, 0,
	    sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_config_urlencode);
	suite_add_tcase(s, tc);
	return (s);
}
