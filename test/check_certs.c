/*
 * admission/certs.c, its pure part: certificates issued with GnuTLS, and
 * the rule that keeps or renews them.  What openssl makes of them is
 * checked by the in-cluster test (the API server and curl verify them).
 * Also common/httpdtls.c's rule for client certificates (purpose and name),
 * on certificates issued here, and its flag parsers.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <gnutls/x509.h>

#include "admission.h"
#include "httpd.h"
#include "check_suites.h"

#define NOW 1800000000 /* 2027-01-15 */

static void
issue_ca(char **crt, char **key, int days)
{
	const char	*dns[] = { NULL };
	struct certs_req r = { .cn = "test-ca",
		.dns = dns,
		.is_ca = 1,
		.days = days,
		.now = NOW };

	ck_assert_int_eq(certs_issue_pem(&r, NULL, NULL, crt, key), 0);
}

static void
issue_leaf(const char *ca_crt, const char *ca_key, int client, int days,
    char **crt, char **key)
{
	const char	*dns[] = { "svc.ns.svc", "svc", NULL };
	struct certs_req r = { .cn = "svc",
		.dns = dns,
		.client = client,
		.days = days,
		.now = NOW };

	ck_assert_int_eq(certs_issue_pem(&r, ca_crt, ca_key, crt, key), 0);
}

/* The certificate of PEM, for inspection; the caller deinits it. */
static gnutls_x509_crt_t
parse(const char *pem)
{
	gnutls_x509_crt_t c;
	gnutls_datum_t	  d = { (unsigned char *)(uintptr_t)pem,
		   (unsigned)strlen(pem) };

	ck_assert_int_ge(gnutls_x509_crt_init(&c), 0);
	ck_assert_int_ge(gnutls_x509_crt_import(c, &d, GNUTLS_X509_FMT_PEM), 0);
	return (c);
}

START_TEST(test_certs_leaf)
{
	char		 *ca, *cakey, *crt, *key, why[128] = "", san[256];
	size_t		  len = sizeof(san);
	unsigned	  critical, ca_flag = 9;
	gnutls_x509_crt_t c;

	issue_ca(&ca, &cakey, 800);
	issue_leaf(ca, cakey, 0, 365, &crt, &key);
	ck_assert_ptr_nonnull(strstr(crt, "BEGIN CERTIFICATE"));
	ck_assert_ptr_nonnull(strstr(key, "BEGIN PRIVATE KEY"));
	c = parse(crt);
	ck_assert_int_eq(gnutls_x509_crt_get_subject_alt_name(c, 0, san, &len,
			     &critical),
	    GNUTLS_SAN_DNSNAME);
	ck_assert_str_eq(san, "svc.ns.svc");
	ck_assert_int_eq(gnutls_x509_crt_get_expiration_time(c),
	    NOW + 365 * 86400);
	ck_assert_int_lt(gnutls_x509_crt_get_activation_time(c), NOW);
	ck_assert_int_ge(gnutls_x509_crt_get_basic_constraints(c, &critical,
			     &ca_flag, NULL),
	    0);
	ck_assert_uint_eq(ca_flag, 0);
	gnutls_x509_crt_deinit(c);
	c = parse(ca);
	ck_assert_int_ge(gnutls_x509_crt_get_basic_constraints(c, &critical,
			     &ca_flag, NULL),
	    0);
	ck_assert_uint_eq(ca_flag, 1);
	gnutls_x509_crt_deinit(c);
	/* Usable now, signed by its CA; the key is the certificate's. */
	ck_assert_int_eq(certs_usable(crt, ca, NOW, why, sizeof(why)), 1);
	ck_assert_int_eq(certs_pair_ok(crt, key), 1);
	ck_assert_int_eq(certs_pair_ok(crt, cakey), 0);
	ck_assert_int_eq(certs_pair_ok(crt, NULL), 0);
	ck_assert_int_eq(certs_pair_ok("garbage", key), 0);
	free(ca);
	free(cakey);
	free(crt);
	free(key);
}
END_TEST

START_TEST(test_certs_renew)
{
	char *ca, *cakey, *ca2, *cakey2, *crt, *key, why[128] = "";

	issue_ca(&ca, &cakey, 800);
	issue_ca(&ca2, &cakey2, 800);
	issue_leaf(ca, cakey, 1, 365, &crt, &key);
	/* 30 days before it expires, it is renewed. */
	ck_assert_int_eq(certs_usable(crt, ca, NOW + 334 * 86400, why,
			     sizeof(why)),
	    1);
	ck_assert_int_eq(certs_usable(crt, ca, NOW + 336 * 86400, why,
			     sizeof(why)),
	    0);
	ck_assert_str_eq(why, "expires within 30 days");
	/* Another CA: renewed. */
	ck_assert_int_eq(certs_usable(crt, ca2, NOW, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "not signed by the current CA");
	ck_assert_int_eq(certs_usable("garbage", ca, NOW, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "not a PEM certificate");
	/* A CA that does not parse issues nothing. */
	free(key);
	free(crt);
	{
		const char	*dns[] = { NULL };
		struct certs_req r = { .cn = "x", .dns = dns, .days = 1 };

		ck_assert_int_eq(certs_issue_pem(&r, "garbage", cakey, &crt,
				     &key),
		    -1);
		ck_assert_ptr_null(crt);
		ck_assert_ptr_null(key);
	}
	free(ca);
	free(cakey);
	free(ca2);
	free(cakey2);
}
END_TEST

/* A leaf never outlives the CA that signed it. */
START_TEST(test_certs_capped)
{
	char		 *ca, *cakey, *crt, *key;
	gnutls_x509_crt_t c, a;

	issue_ca(&ca, &cakey, 100);
	issue_leaf(ca, cakey, 0, 365, &crt, &key);
	c = parse(crt);
	a = parse(ca);
	ck_assert_int_eq(gnutls_x509_crt_get_expiration_time(c),
	    gnutls_x509_crt_get_expiration_time(a));
	gnutls_x509_crt_deinit(c);
	gnutls_x509_crt_deinit(a);
	free(ca);
	free(cakey);
	free(crt);
	free(key);
}
END_TEST

/* A client certificate must be for clientAuth and carry a name asked for. */
START_TEST(test_certs_client_ok)
{
	char *ca, *cakey, *server, *client, *key, cn[128], why[256];

	issue_ca(&ca, &cakey, 800);
	issue_leaf(ca, cakey, 0, 365, &server, &key);
	free(key);
	issue_leaf(ca, cakey, 1, 365, &client, &key);
	free(key);
	/* A serving certificate (serverAuth only) is refused, whatever its name. */
	ck_assert_int_eq(httpd_cert_client_ok(server, NULL, cn, sizeof(cn), why,
			     sizeof(why)),
	    0);
	ck_assert_str_eq(cn, "svc");
	ck_assert_ptr_nonnull(strstr(why, "extendedKeyUsage lacks clientAuth"));
	ck_assert_int_eq(httpd_cert_client_ok(server, "svc", cn, sizeof(cn),
			     why, sizeof(why)),
	    0);
	/* A client certificate: any name, or one of those asked for. */
	ck_assert_int_eq(httpd_cert_client_ok(client, NULL, cn, sizeof(cn), why,
			     sizeof(why)),
	    1);
	ck_assert_int_eq(httpd_cert_client_ok(client, "*", cn, sizeof(cn), why,
			     sizeof(why)),
	    1);
	ck_assert_int_eq(httpd_cert_client_ok(client, "other,SVC", cn,
			     sizeof(cn), why, sizeof(why)),
	    1);
	/* By a DNS subject alternative name too; never by a prefix. */
	ck_assert_int_eq(httpd_cert_client_ok(client, "svc.ns.svc", cn,
			     sizeof(cn), why, sizeof(why)),
	    1);
	ck_assert_int_eq(httpd_cert_client_ok(client, "sv,svc.ns", cn,
			     sizeof(cn), why, sizeof(why)),
	    0);
	ck_assert_str_eq(why,
	    "neither the client certificate's CN (svc) nor a DNS name of it "
	    "is among sv,svc.ns");
	/* No extendedKeyUsage (the CA's): any purpose. */
	ck_assert_int_eq(httpd_cert_client_ok(ca, "test-ca", cn, sizeof(cn),
			     why, sizeof(why)),
	    1);
	ck_assert_int_eq(httpd_cert_client_ok("garbage", NULL, cn, sizeof(cn),
			     why, sizeof(why)),
	    0);
	free(ca);
	free(cakey);
	free(server);
	free(client);
}
END_TEST

START_TEST(test_certs_httpd_flags)
{
	char	     err[256];
	unsigned int n = 0;

	ck_assert_int_eq(httpd_check_names("--client-name", "a", err,
			     sizeof(err)),
	    0);
	ck_assert_int_eq(httpd_check_names("--client-name", "a,b.c", err,
			     sizeof(err)),
	    0);
	ck_assert_int_eq(httpd_check_names("--client-name", "*", err,
			     sizeof(err)),
	    0);
	ck_assert_int_eq(httpd_check_names("--client-name", "", err,
			     sizeof(err)),
	    -1);
	ck_assert_int_eq(httpd_check_names("--client-name", "a,,b", err,
			     sizeof(err)),
	    -1);
	ck_assert_int_eq(httpd_check_names("--client-name", "a,", err,
			     sizeof(err)),
	    -1);
	ck_assert_int_eq(httpd_check_names("--client-name", "a b", err,
			     sizeof(err)),
	    -1);
	ck_assert_int_eq(httpd_check_names("--client-name", "a,*", err,
			     sizeof(err)),
	    -1);
	ck_assert_ptr_nonnull(strstr(err, "--client-name: \"a,*\""));
	ck_assert_int_eq(httpd_parse_limit("--max-connections", "64", 4096, &n,
			     err, sizeof(err)),
	    0);
	ck_assert_uint_eq(n, 64);
	ck_assert_int_eq(httpd_parse_limit("--max-connections", "0", 4096, &n,
			     err, sizeof(err)),
	    -1);
	ck_assert_int_eq(httpd_parse_limit("--max-connections", "4097", 4096,
			     &n, err, sizeof(err)),
	    -1);
	ck_assert_int_eq(httpd_parse_limit("--max-connections", "8x", 4096, &n,
			     err, sizeof(err)),
	    -1);
	ck_assert_str_eq(err,
	    "--max-connections: \"8x\" is not a number from 1 to 4096");
	ck_assert_uint_eq(n, 64);
}
END_TEST

Suite *
certs_suite(void)
{
	Suite *s = suite_create("certs");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_certs_leaf);
	tcase_add_test(tc, test_certs_renew);
	tcase_add_test(tc, test_certs_capped);
	tcase_add_test(tc, test_certs_client_ok);
	tcase_add_test(tc, test_certs_httpd_flags);
	suite_add_tcase(s, tc);
	return (s);
}
