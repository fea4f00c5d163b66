/*
 * test_common: the helpers every module shares, above all those that keep
 * text chosen by the agent from driving a terminal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static void check_sanitize(const char *in, const char *want)
{
	char *got = wd_sanitize(in);
	assert_string_equal(got, want);
	free(got);
}

static void test_wd_sanitize_controls(void **state)
{
	(void)state;
	check_sanitize("plain text, é and ✓", "plain text, é and ✓");
	check_sanitize("a\nb\tc\033[31m\x7f", "a\\x0ab\\x09c\\x1b[31m\\x7f");
	/* C1 controls as UTF-8 (U+009B is CSI) */
	check_sanitize("x\xc2\x9b"
		       "31m",
		       "x\\u009b31m");
	/* a lone byte that is not UTF-8: CSI on an 8-bit terminal */
	check_sanitize("x\x9b"
		       "31m",
		       "x\\x9b31m");
	check_sanitize("\xff\xfe", "\\xff\\xfe");
	/* bidirectional controls ("Trojan Source") */
	check_sanitize("rm \xe2\x80\xae"
		       "fdsa",
		       "rm \\u202efdsa");
	check_sanitize("\xe2\x81\xa6x\xe2\x81\xa9", "\\u2066x\\u2069");
	check_sanitize(NULL, "");
}

static void test_wd_sb_json_str_hidden(void **state)
{
	(void)state;
	struct wd_sb sb = {0};
	wd_sb_json_str(&sb, "a\"\\\n\033\xe2\x80\xae"
			    "b\xc2\x9b"
			    "é");
	assert_string_equal(sb.buf, "\"a\\\"\\\\\\n\\u001b\\u202eb\\u009bé\"");
	wd_sb_free(&sb);
}

static void test_wd_sb_csv_field(void **state)
{
	(void)state;
	struct wd_sb sb = {0};
	wd_sb_csv_field(&sb, "plain", false);
	wd_sb_csv_field(&sb, "a,b", false);
	wd_sb_csv_field(&sb, "say \"hi\"", false);
	wd_sb_csv_field(&sb, NULL, false);
	wd_sb_csv_field(&sb, "x\ny", true);
	assert_string_equal(sb.buf, "plain,\"a,b\",\"say \"\"hi\"\"\",,\"x\ny\"\r\n");
	wd_sb_free(&sb);
}

static void test_wd_strv(void **state)
{
	(void)state;
	char *v[] = {"a", "b", NULL};
	size_t n = 0;
	char **d = wd_strv_dup(v, &n);
	assert_int_equal(n, 2);
	assert_true(wd_strv_equal(v, d));
	wd_strv_push(&d, "c");
	assert_int_equal(wd_strv_len(d), 3);
	assert_false(wd_strv_equal(v, d));
	assert_true(wd_strv_equal(NULL, NULL));
	assert_false(wd_strv_equal(v, NULL));
	char **e = NULL;
	wd_strv_push(&e, "x");
	assert_string_equal(e[0], "x");
	assert_null(e[1]);
	wd_strv_free(d);
	wd_strv_free(e);
	wd_strv_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wd_sanitize_controls),
		cmocka_unit_test(test_wd_sb_json_str_hidden),
		cmocka_unit_test(test_wd_sb_csv_field),
		cmocka_unit_test(test_wd_strv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
