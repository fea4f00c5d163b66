/*
 * readonly.c: the programs of the fast path, each with its options as the
 * program itself defines them (grammar.h), and the check of a command
 * against them.
 *
 * A command is read-only when warden knows exactly which program runs and
 * what every word it receives does: each option in the program's table,
 * none that writes, runs code, reads names from elsewhere or prints
 * secrets, and the program's own operand rule (readonly_rules.c) met. The
 * tables follow the programs' --help on Debian 12; test_policy_grammar.c
 * checks each against the installed program.
 *
 * See docs/design.md, section "Grammars".
 */
#include "grammar.h"
#include "policy_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define N  GR_NOARG
#define A  GR_ARG
#define OA GR_OPTARG
#define OK GR_OK
#define END                                                                                        \
	{                                                                                          \
		NULL, 0, GR_NOARG, GR_OK                                                           \
	}
#define STD                                                                                        \
	{"help", 0, N, OK},                                                                        \
	{                                                                                          \
		"version", 0, N, OK                                                                \
	}

/* ---- tables ---------------------------------------------------------------------- */

/* clang-format off */
static const struct pol_gr_opt ls_opts[] = {
	{"all", 'a', N, OK}, {"almost-all", 'A', N, OK}, {"author", 0, N, OK},
	{"escape", 'b', N, OK}, {"block-size", 0, A, OK}, {"ignore-backups", 'B', N, OK},
	{NULL, 'c', N, OK}, {NULL, 'C', N, OK}, {"color", 0, OA, OK}, {"directory", 'd', N, OK},
	{"dired", 'D', N, OK}, {NULL, 'f', N, OK}, {"classify", 'F', OA, OK},
	{"file-type", 0, N, OK}, {"format", 0, A, OK}, {"full-time", 0, N, OK},
	{NULL, 'g', N, OK}, {"group-directories-first", 0, N, OK}, {"no-group", 'G', N, OK},
	{"human-readable", 'h', N, OK}, {"si", 0, N, OK},
	{"dereference-command-line", 'H', N, OK},
	{"dereference-command-line-symlink-to-dir", 0, N, OK}, {"hide", 0, A, OK},
	{"hyperlink", 0, OA, OK}, {"indicator-style", 0, A, OK}, {"inode", 'i', N, OK},
	{"ignore", 'I', A, OK}, {"kibibytes", 'k', N, OK}, {NULL, 'l', N, OK},
	{"dereference", 'L', N, OK}, {NULL, 'm', N, OK}, {"numeric-uid-gid", 'n', N, OK},
	{"literal", 'N', N, OK}, {NULL, 'o', N, OK}, {NULL, 'p', N, OK},
	{"hide-control-chars", 'q', N, OK}, {"show-control-chars", 0, N, OK},
	{"quote-name", 'Q', N, OK}, {"quoting-style", 0, A, OK}, {"reverse", 'r', N, OK},
	{"recursive", 'R', N, OK}, {"size", 's', N, OK}, {NULL, 'S', N, OK}, {"sort", 0, A, OK},
	{"time", 0, A, OK}, {"time-style", 0, A, OK}, {NULL, 't', N, OK},
	{"tabsize", 'T', A, OK}, {NULL, 'u', N, OK}, {NULL, 'U', N, OK}, {NULL, 'v', N, OK},
	{"width", 'w', A, OK}, {NULL, 'x', N, OK}, {NULL, 'X', N, OK}, {"context", 'Z', N, OK},
	{"zero", 0, N, OK}, {NULL, '1', N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt cat_opts[] = {
	{"show-all", 'A', N, OK}, {"number-nonblank", 'b', N, OK}, {NULL, 'e', N, OK},
	{"show-ends", 'E', N, OK}, {"number", 'n', N, OK}, {"squeeze-blank", 's', N, OK},
	{NULL, 't', N, OK}, {"show-tabs", 'T', N, OK}, {NULL, 'u', N, OK},
	{"show-nonprinting", 'v', N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt head_opts[] = {
	{"bytes", 'c', A, OK}, {"lines", 'n', A, OK}, {"quiet", 'q', N, OK},
	{"silent", 0, N, OK}, {"verbose", 'v', N, OK}, {"zero-terminated", 'z', N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt tail_opts[] = {
	{"bytes", 'c', A, OK}, {"follow", 'f', OA, OK}, {NULL, 'F', N, OK},
	{"lines", 'n', A, OK}, {"max-unchanged-stats", 0, A, OK}, {"pid", 0, A, OK},
	{"quiet", 'q', N, OK}, {"silent", 0, N, OK}, {"retry", 0, N, OK},
	{"sleep-interval", 's', A, OK}, {"verbose", 'v', N, OK}, {"zero-terminated", 'z', N, OK},
	STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt wc_opts[] = {
	{"bytes", 'c', N, OK}, {"chars", 'm', N, OK}, {"lines", 'l', N, OK},
	{"files0-from", 0, A, GR_ELSEWHERE}, {"max-line-length", 'L', N, OK},
	{"words", 'w', N, OK}, {"total", 0, A, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt pwd_opts[] = {
	{"logical", 'L', N, OK}, {"physical", 'P', N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt grep_opts[] = {
	{"extended-regexp", 'E', N, OK}, {"fixed-strings", 'F', N, OK},
	{"basic-regexp", 'G', N, OK}, {"perl-regexp", 'P', N, OK}, {"regexp", 'e', A, OK},
	{"file", 'f', A, OK}, {"ignore-case", 'i', N, OK}, {NULL, 'y', N, OK},
	{"no-ignore-case", 0, N, OK}, {"word-regexp", 'w', N, OK}, {"line-regexp", 'x', N, OK},
	{"null-data", 'z', N, OK}, {"no-messages", 's', N, OK}, {"invert-match", 'v', N, OK},
	{"version", 'V', N, OK}, {"help", 0, N, OK}, {"max-count", 'm', A, OK},
	{"byte-offset", 'b', N, OK}, {"line-number", 'n', N, OK}, {"line-buffered", 0, N, OK},
	{"with-filename", 'H', N, OK}, {"no-filename", 'h', N, OK}, {"label", 0, A, OK},
	{"only-matching", 'o', N, OK}, {"quiet", 'q', N, OK}, {"silent", 0, N, OK},
	{"binary-files", 0, A, OK}, {"text", 'a', N, OK}, {NULL, 'I', N, OK},
	{"directories", 'd', A, OK}, {"devices", 'D', A, OK}, {"recursive", 'r', N, OK},
	{"dereference-recursive", 'R', N, OK}, {"include", 0, A, OK}, {"exclude", 0, A, OK},
	{"exclude-from", 0, A, OK}, {"exclude-dir", 0, A, OK},
	{"files-without-match", 'L', N, OK}, {"files-with-matches", 'l', N, OK},
	{"count", 'c', N, OK}, {"initial-tab", 'T', N, OK}, {"null", 'Z', N, OK},
	{"before-context", 'B', A, OK}, {"after-context", 'A', A, OK}, {"context", 'C', A, OK},
	{"group-separator", 0, A, OK}, {"no-group-separator", 0, N, OK}, {"color", 0, OA, OK},
	{"colour", 0, OA, OK}, {"binary", 'U', N, OK}, {NULL, 'u', N, OK}, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt stat_opts[] = {
	{"dereference", 'L', N, OK}, {"file-system", 'f', N, OK}, {"cached", 0, A, OK},
	{"format", 'c', A, OK}, {"printf", 0, A, OK}, {"terse", 't', N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt id_opts[] = {
	{"context", 'Z', N, OK}, {"group", 'g', N, OK}, {"groups", 'G', N, OK},
	{"name", 'n', N, OK}, {"real", 'r', N, OK}, {"user", 'u', N, OK}, {"zero", 'z', N, OK},
	{NULL, 'a', N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt uname_opts[] = {
	{"all", 'a', N, OK}, {"kernel-name", 's', N, OK}, {"nodename", 'n', N, OK},
	{"kernel-release", 'r', N, OK}, {"kernel-version", 'v', N, OK}, {"machine", 'm', N, OK},
	{"processor", 'p', N, OK}, {"hardware-platform", 'i', N, OK},
	{"operating-system", 'o', N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt date_opts[] = {
	{"date", 'd', A, OK}, {"debug", 0, N, OK}, {"file", 'f', A, OK},
	{"iso-8601", 'I', OA, OK}, {"resolution", 0, N, OK}, {"rfc-email", 'R', N, OK},
	{"rfc-822", 0, N, OK}, {"rfc-2822", 0, N, OK}, {"rfc-3339", 0, A, OK},
	{"reference", 'r', A, OK}, {"set", 's', A, GR_WRITES}, {"universal", 'u', N, OK},
	{"utc", 0, N, OK}, {"uct", 0, N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt basename_opts[] = {
	{"multiple", 'a', N, OK}, {"suffix", 's', A, OK}, {"zero", 'z', N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt dirname_opts[] = {
	{"zero", 'z', N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt realpath_opts[] = {
	{"canonicalize-existing", 'e', N, OK}, {"canonicalize-missing", 'm', N, OK},
	{"logical", 'L', N, OK}, {"physical", 'P', N, OK}, {"quiet", 'q', N, OK},
	{"relative-to", 0, A, OK}, {"relative-base", 0, A, OK}, {"no-symlinks", 's', N, OK},
	{"strip", 0, N, OK}, {"zero", 'z', N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt readlink_opts[] = {
	{"canonicalize", 'f', N, OK}, {"canonicalize-existing", 'e', N, OK},
	{"canonicalize-missing", 'm', N, OK}, {"no-newline", 'n', N, OK}, {"quiet", 'q', N, OK},
	{"silent", 's', N, OK}, {"verbose", 'v', N, OK}, {"zero", 'z', N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt sort_opts[] = {
	{"ignore-leading-blanks", 'b', N, OK}, {"dictionary-order", 'd', N, OK},
	{"ignore-case", 'f', N, OK}, {"general-numeric-sort", 'g', N, OK},
	{"ignore-nonprinting", 'i', N, OK}, {"month-sort", 'M', N, OK},
	{"human-numeric-sort", 'h', N, OK}, {"numeric-sort", 'n', N, OK},
	{"random-sort", 'R', N, OK}, {"random-source", 0, A, OK}, {"reverse", 'r', N, OK},
	{"sort", 0, A, OK}, {"version-sort", 'V', N, OK}, {"batch-size", 0, A, OK},
	{"check", 0, OA, OK}, {NULL, 'c', N, OK}, {NULL, 'C', N, OK},
	{"compress-program", 0, A, GR_RUNS}, {"debug", 0, N, OK},
	{"files0-from", 0, A, GR_ELSEWHERE}, {"key", 'k', A, OK}, {"merge", 'm', N, OK},
	{"output", 'o', A, GR_WRITES}, {"stable", 's', N, OK}, {"buffer-size", 'S', A, OK},
	{"field-separator", 't', A, OK}, {"temporary-directory", 'T', A, GR_WRITES},
	{"parallel", 0, A, OK}, {"unique", 'u', N, OK}, {"zero-terminated", 'z', N, OK}, STD,
	END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt uniq_opts[] = {
	{"count", 'c', N, OK}, {"repeated", 'd', N, OK}, {"all-repeated", 0, OA, OK},
	{NULL, 'D', N, OK}, {"skip-fields", 'f', A, OK}, {"group", 0, OA, OK},
	{"ignore-case", 'i', N, OK}, {"skip-chars", 's', A, OK}, {"unique", 'u', N, OK},
	{"zero-terminated", 'z', N, OK}, {"check-chars", 'w', A, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt cut_opts[] = {
	{"bytes", 'b', A, OK}, {"characters", 'c', A, OK}, {"delimiter", 'd', A, OK},
	{"fields", 'f', A, OK}, {NULL, 'n', N, OK}, {"complement", 0, N, OK},
	{"only-delimited", 's', N, OK}, {"output-delimiter", 0, A, OK},
	{"zero-terminated", 'z', N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt tr_opts[] = {
	{"complement", 'c', N, OK}, {NULL, 'C', N, OK}, {"delete", 'd', N, OK},
	{"squeeze-repeats", 's', N, OK}, {"truncate-set1", 't', N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt nl_opts[] = {
	{"body-numbering", 'b', A, OK}, {"section-delimiter", 'd', A, OK},
	{"footer-numbering", 'f', A, OK}, {"header-numbering", 'h', A, OK},
	{"line-increment", 'i', A, OK}, {"join-blank-lines", 'l', A, OK},
	{"number-format", 'n', A, OK}, {"no-renumber", 'p', N, OK},
	{"number-separator", 's', A, OK}, {"starting-line-number", 'v', A, OK},
	{"number-width", 'w', A, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt tac_opts[] = {
	{"before", 'b', N, OK}, {"regex", 'r', N, OK}, {"separator", 's', A, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt seq_opts[] = {
	{"format", 'f', A, OK}, {"separator", 's', A, OK}, {"equal-width", 'w', N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt help_only_opts[] = {
	STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt sum_opts[] = {
	{"binary", 'b', N, OK}, {"check", 'c', N, OK}, {"tag", 0, N, OK}, {"text", 't', N, OK},
	{"zero", 'z', N, OK}, {"ignore-missing", 0, N, OK}, {"quiet", 0, N, OK},
	{"status", 0, N, OK}, {"strict", 0, N, OK}, {"warn", 'w', N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt b2sum_opts[] = {
	{"binary", 'b', N, OK}, {"check", 'c', N, OK}, {"length", 'l', A, OK}, {"tag", 0, N, OK},
	{"text", 't', N, OK}, {"zero", 'z', N, OK}, {"ignore-missing", 0, N, OK},
	{"quiet", 0, N, OK}, {"status", 0, N, OK}, {"strict", 0, N, OK}, {"warn", 'w', N, OK},
	STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt cksum_opts[] = {
	{"algorithm", 'a', A, OK}, {"check", 'c', N, OK}, {"length", 'l', A, OK},
	{"tag", 0, N, OK}, {"untagged", 0, N, OK}, {"zero", 'z', N, OK},
	{"ignore-missing", 0, N, OK}, {"quiet", 0, N, OK}, {"status", 0, N, OK},
	{"strict", 0, N, OK}, {"warn", 'w', N, OK}, {"debug", 0, N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt od_opts[] = {
	{"address-radix", 'A', A, OK}, {"endian", 0, A, OK}, {"skip-bytes", 'j', A, OK},
	{"read-bytes", 'N', A, OK}, {"strings", 'S', OA, OK}, {"format", 't', A, OK},
	{"output-duplicates", 'v', N, OK}, {"width", 'w', OA, OK}, {"traditional", 0, N, OK},
	{NULL, 'a', N, OK}, {NULL, 'b', N, OK}, {NULL, 'c', N, OK}, {NULL, 'd', N, OK},
	{NULL, 'f', N, OK}, {NULL, 'i', N, OK}, {NULL, 'l', N, OK}, {NULL, 'o', N, OK},
	{NULL, 's', N, OK}, {NULL, 'x', N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt du_opts[] = {
	{"null", '0', N, OK}, {"all", 'a', N, OK}, {"apparent-size", 0, N, OK},
	{"block-size", 'B', A, OK}, {"bytes", 'b', N, OK}, {"total", 'c', N, OK},
	{"dereference-args", 'D', N, OK}, {NULL, 'H', N, OK}, {"max-depth", 'd', A, OK},
	{"files0-from", 0, A, GR_ELSEWHERE}, {"human-readable", 'h', N, OK},
	{"inodes", 0, N, OK}, {NULL, 'k', N, OK}, {"dereference", 'L', N, OK},
	{"count-links", 'l', N, OK}, {NULL, 'm', N, OK}, {"no-dereference", 'P', N, OK},
	{"separate-dirs", 'S', N, OK}, {"si", 0, N, OK}, {"summarize", 's', N, OK},
	{"threshold", 't', A, OK}, {"time", 0, OA, OK}, {"time-style", 0, A, OK},
	{"exclude-from", 'X', A, OK}, {"exclude", 0, A, OK}, {"one-file-system", 'x', N, OK},
	STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt df_opts[] = {
	{"all", 'a', N, OK}, {"block-size", 'B', A, OK}, {"human-readable", 'h', N, OK},
	{NULL, 'H', N, OK}, {"si", 0, N, OK}, {"inodes", 'i', N, OK}, {NULL, 'k', N, OK},
	{"local", 'l', N, OK}, {"no-sync", 0, N, OK}, {"output", 0, OA, OK},
	{"portability", 'P', N, OK}, {"sync", 0, N, OK}, {"total", 0, N, OK},
	{"type", 't', A, OK}, {"print-type", 'T', N, OK}, {"exclude-type", 'x', A, OK},
	{NULL, 'v', N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt nproc_opts[] = {
	{"all", 0, N, OK}, {"ignore", 0, A, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt tty_opts[] = {
	{"silent", 's', N, OK}, {"quiet", 0, N, OK}, STD, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt diff_opts[] = {
	{"normal", 0, N, OK}, {"brief", 'q', N, OK}, {"report-identical-files", 's', N, OK},
	{"context", 0, OA, OK}, {NULL, 'c', N, OK}, {NULL, 'C', A, OK}, {"unified", 0, OA, OK},
	{NULL, 'u', N, OK}, {NULL, 'U', A, OK}, {"ed", 'e', N, OK}, {"rcs", 'n', N, OK},
	{"side-by-side", 'y', N, OK}, {"width", 'W', A, OK}, {"left-column", 0, N, OK},
	{"suppress-common-lines", 0, N, OK}, {"show-c-function", 'p', N, OK},
	{"show-function-line", 'F', A, OK}, {"label", 0, A, OK}, {"expand-tabs", 't', N, OK},
	{"initial-tab", 'T', N, OK}, {"tabsize", 0, A, OK}, {"suppress-blank-empty", 0, N, OK},
	{"paginate", 'l', N, GR_RUNS}, {"recursive", 'r', N, OK}, {"no-dereference", 0, N, OK},
	{"new-file", 'N', N, OK}, {"unidirectional-new-file", 0, N, OK},
	{"ignore-file-name-case", 0, N, OK}, {"no-ignore-file-name-case", 0, N, OK},
	{"exclude", 'x', A, OK}, {"exclude-from", 'X', A, OK}, {"starting-file", 'S', A, OK},
	{"from-file", 0, A, OK}, {"to-file", 0, A, OK}, {"ignore-case", 'i', N, OK},
	{"ignore-tab-expansion", 'E', N, OK}, {"ignore-trailing-space", 'Z', N, OK},
	{"ignore-space-change", 'b', N, OK}, {"ignore-all-space", 'w', N, OK},
	{"ignore-blank-lines", 'B', N, OK}, {"ignore-matching-lines", 'I', A, OK},
	{"text", 'a', N, OK}, {"strip-trailing-cr", 0, N, OK}, {"ifdef", 'D', A, OK},
	{"old-group-format", 0, A, OK}, {"new-group-format", 0, A, OK},
	{"unchanged-group-format", 0, A, OK}, {"changed-group-format", 0, A, OK},
	{"line-format", 0, A, OK}, {"old-line-format", 0, A, OK}, {"new-line-format", 0, A, OK},
	{"unchanged-line-format", 0, A, OK}, {"minimal", 'd', N, OK},
	{"horizon-lines", 0, A, OK}, {"speed-large-files", 0, N, OK}, {"color", 0, OA, OK},
	{"palette", 0, A, OK}, {"help", 0, N, OK}, {"version", 'v', N, OK}, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt cmp_opts[] = {
	{"print-bytes", 'b', N, OK}, {"ignore-initial", 'i', A, OK}, {"verbose", 'l', N, OK},
	{"bytes", 'n', A, OK},	     {"quiet", 's', N, OK},	     {"silent", 0, N, OK},
	{"help", 0, N, OK},	     {"version", 'v', N, OK},	     END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt sed_opts[] = {
	{"quiet", 'n', N, OK}, {"silent", 0, N, OK}, {"debug", 0, N, OK},
	{"expression", 'e', A, GR_CHECKED}, {"file", 'f', A, GR_RUNS},
	{"follow-symlinks", 0, N, OK}, {"in-place", 'i', OA, GR_WRITES},
	{"line-length", 'l', A, OK}, {"posix", 0, N, OK}, {"regexp-extended", 'r', N, OK},
	{NULL, 'E', N, OK}, {"separate", 's', N, OK}, {"sandbox", 0, N, OK},
	{"unbuffered", 'u', N, OK}, {"null-data", 'z', N, OK}, {"zero-terminated", 0, N, OK},
	STD, END,
};
/* clang-format on */

/* find's options before its paths; the expression has its own table. */
/* clang-format off */
static const struct pol_gr_opt find_opts[] = {
	{NULL, 'H', N, OK}, {NULL, 'L', N, OK},	 {NULL, 'P', N, OK},
	{NULL, 'D', A, OK}, {NULL, 'O', OA, OK}, END,
};
/* clang-format on */

/* clang-format off */
static const struct pol_gr_opt file_opts[] = {
	{"help", 0, N, OK}, {"version", 'v', N, OK}, {"magic-file", 'm', A, OK},
	{"uncompress", 'z', N, OK}, {"uncompress-noreport", 'Z', N, OK}, {"brief", 'b', N, OK},
	{"checking-printout", 'c', N, OK}, {"exclude", 'e', A, OK}, {"exclude-quiet", 0, A, OK},
	{"files-from", 'f', A, GR_ELSEWHERE}, {"separator", 'F', A, OK}, {"mime", 'i', N, OK},
	{"mime-encoding", 0, N, OK}, {"mime-type", 0, N, OK}, {"apple", 0, N, OK},
	{"extension", 0, N, OK}, {"keep-going", 'k', N, OK}, {"list", 'l', N, OK},
	{"dereference", 'L', N, OK}, {"no-dereference", 'h', N, OK}, {"no-buffer", 'n', N, OK},
	{"no-pad", 'N', N, OK}, {"print0", '0', N, OK}, {"preserve-date", 'p', N, GR_WRITES},
	{"parameter", 'P', A, OK}, {"raw", 'r', N, OK}, {"special-files", 's', N, OK},
	{"no-sandbox", 'S', N, OK}, {"compile", 'C', N, GR_WRITES}, {"debug", 'd', N, OK}, END,
};
/* clang-format on */

/* ripgrep (Claude Code's own binary plays it): exact long names, no
 * abbreviations; short options cluster. */
/* clang-format off */
static const struct pol_gr_opt rg_opts[] = {
	{"after-context", 'A', A, OK}, {"before-context", 'B', A, OK}, {"context", 'C', A, OK},
	{"binary", 0, N, OK}, {"block-buffered", 0, N, OK}, {"byte-offset", 'b', N, OK},
	{"case-sensitive", 's', N, OK}, {"color", 0, A, OK}, {"colors", 0, A, OK},
	{"column", 0, N, OK}, {"no-column", 0, N, OK}, {"context-separator", 0, A, OK},
	{"count", 'c', N, OK}, {"count-matches", 0, N, OK}, {"crlf", 0, N, OK},
	{"debug", 0, N, OK}, {"trace", 0, N, OK}, {"dfa-size-limit", 0, A, OK},
	{"encoding", 'E', A, OK}, {"engine", 0, A, OK}, {"file", 'f', A, OK},
	{"files", 0, N, OK}, {"files-with-matches", 'l', N, OK},
	{"files-without-match", 0, N, OK}, {"fixed-strings", 'F', N, OK}, {"follow", 'L', N, OK},
	{"no-follow", 0, N, OK}, {"glob", 'g', A, OK}, {"glob-case-insensitive", 0, N, OK},
	{"help", 'h', N, OK}, {"heading", 0, N, OK}, {"no-heading", 0, N, OK},
	{"hidden", '.', N, OK}, {"no-hidden", 0, N, OK}, {"hostname-bin", 0, A, GR_RUNS},
	{"hyperlink-format", 0, A, OK}, {"iglob", 0, A, OK}, {"ignore-case", 'i', N, OK},
	{"ignore-file", 0, A, OK}, {"ignore-file-case-insensitive", 0, N, OK},
	{"include-zero", 0, N, OK}, {"invert-match", 'v', N, OK}, {"json", 0, N, OK},
	{"no-json", 0, N, OK}, {"line-buffered", 0, N, OK}, {"line-number", 'n', N, OK},
	{"no-line-number", 'N', N, OK}, {"line-regexp", 'x', N, OK}, {"max-columns", 'M', A, OK},
	{"max-columns-preview", 0, N, OK}, {"max-count", 'm', A, OK}, {"max-depth", 'd', A, OK},
	{"maxdepth", 0, A, OK}, {"max-filesize", 0, A, OK}, {"mmap", 0, N, OK},
	{"no-mmap", 0, N, OK}, {"multiline", 'U', N, OK}, {"multiline-dotall", 0, N, OK},
	{"no-config", 0, N, OK}, {"no-ignore", 0, N, OK}, {"no-ignore-dot", 0, N, OK},
	{"no-ignore-exclude", 0, N, OK}, {"no-ignore-files", 0, N, OK},
	{"no-ignore-global", 0, N, OK}, {"no-ignore-messages", 0, N, OK},
	{"no-ignore-parent", 0, N, OK}, {"no-ignore-vcs", 0, N, OK}, {"no-messages", 0, N, OK},
	{"no-require-git", 0, N, OK}, {"no-unicode", 0, N, OK}, {"null", '0', N, OK},
	{"null-data", 0, N, OK}, {"one-file-system", 0, N, OK}, {"only-matching", 'o', N, OK},
	{"path-separator", 0, A, OK}, {"passthru", 0, N, OK}, {"pcre2", 'P', N, OK},
	{"pcre2-version", 0, N, OK}, {"pre", 0, A, GR_RUNS}, {"pre-glob", 0, A, OK},
	{"pretty", 'p', N, OK}, {"quiet", 'q', N, OK}, {"regex-size-limit", 0, A, OK},
	{"regexp", 'e', A, OK}, {"replace", 'r', A, OK}, {"search-zip", 'z', N, OK},
	{"smart-case", 'S', N, OK}, {"sort", 0, A, OK}, {"sortr", 0, A, OK}, {"stats", 0, N, OK},
	{"stop-on-nonmatch", 0, N, OK}, {"text", 'a', N, OK}, {"threads", 'j', A, OK},
	{"trim", 0, N, OK}, {"type", 't', A, OK}, {"type-not", 'T', A, OK},
	{"type-add", 0, A, OK}, {"type-clear", 0, A, OK}, {"type-list", 0, N, OK},
	{"unrestricted", 'u', N, OK}, {"version", 'V', N, OK}, {"vimgrep", 0, N, OK},
	{"with-filename", 'H', N, OK}, {"no-filename", 'I', N, OK}, {"word-regexp", 'w', N, OK},
	{"auto-hybrid-regex", 0, N, OK}, END,
};
/* clang-format on */

/* which (debianutils' shell script): getopts "a", exact. */
/* clang-format off */
static const struct pol_gr_opt which_opts[] = {
	{NULL, 'a', N, OK}, END,
};
/* clang-format on */
/* The shell builtins cd and type, inside a script. */
/* clang-format off */
static const struct pol_gr_opt cd_opts[] = {
	{NULL, 'L', N, OK}, {NULL, 'P', N, OK}, {NULL, 'e', N, OK}, {NULL, '@', N, OK}, END,
};
/* clang-format on */
/* clang-format off */
static const struct pol_gr_opt type_opts[] = {
	{NULL, 'a', N, OK}, {NULL, 'f', N, OK}, {NULL, 'p', N, OK},
	{NULL, 'P', N, OK}, {NULL, 't', N, OK}, END,
};
/* clang-format on */
/* clang-format off */
static const struct pol_gr_opt none_opts[] = {
	END,
};
/* clang-format on */

/* ---- the table ----------------------------------------------------------------------------- */

/* Programs that print what they read: an operand under /proc (environ,
 * cmdline, mem of a process) prints secrets. */
/* clang-format off */
static const char *const printers[] = {
	"cat",	   "head",	"tail",	     "grep",	  "sort",      "uniq",	"cut",	 "tr",
	"nl",	   "tac",	"diff",	     "cmp",	  "od",	       "sed",	"file",	 "md5sum",
	"sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "rg",
	"date",
};
/* clang-format on */

static const struct pol_gr_prog programs[] = {
	{"ls", NULL, GR_GNU, ls_opts, NULL},
	{"cat", NULL, GR_GNU, cat_opts, NULL},
	{"head", NULL, GR_GNU, head_opts, NULL},
	{"tail", NULL, GR_GNU, tail_opts, NULL},
	{"wc", NULL, GR_GNU, wc_opts, NULL},
	{"pwd", NULL, GR_GNU, pwd_opts, NULL},
	{"echo", NULL, GR_WORDS, none_opts, NULL},
	{"printf", NULL, GR_WORDS, none_opts, NULL},
	{"true", NULL, GR_WORDS, none_opts, NULL},
	{"false", NULL, GR_WORDS, none_opts, NULL},
	{"test", NULL, GR_WORDS, none_opts, NULL},
	{"[", NULL, GR_WORDS, none_opts, NULL},
	{":", NULL, GR_WORDS, none_opts, NULL},
	{"sleep", NULL, GR_GNU, help_only_opts, NULL},
	{"whoami", NULL, GR_GNU, help_only_opts, NULL},
	{"grep", NULL, GR_GNU, grep_opts, NULL},
	{"stat", NULL, GR_GNU, stat_opts, NULL},
	{"id", NULL, GR_GNU, id_opts, NULL},
	{"uname", NULL, GR_GNU, uname_opts, NULL},
	{"date", NULL, GR_GNU, date_opts, NULL},
	{"basename", NULL, GR_GNU, basename_opts, NULL},
	{"dirname", NULL, GR_GNU, dirname_opts, NULL},
	{"realpath", NULL, GR_GNU, realpath_opts, NULL},
	{"readlink", NULL, GR_GNU, readlink_opts, NULL},
	{"sort", NULL, GR_GNU, sort_opts, NULL},
	{"uniq", NULL, GR_GNU, uniq_opts, pol_gr_check_one_operand},
	{"cut", NULL, GR_GNU, cut_opts, NULL},
	{"tr", NULL, GR_GNU, tr_opts, NULL},
	{"nl", NULL, GR_GNU, nl_opts, NULL},
	{"tac", NULL, GR_GNU, tac_opts, NULL},
	{"seq", NULL, GR_GNU, seq_opts, NULL},
	{"md5sum", NULL, GR_GNU, sum_opts, NULL},
	{"sha1sum", NULL, GR_GNU, sum_opts, NULL},
	{"sha224sum", NULL, GR_GNU, sum_opts, NULL},
	{"sha256sum", NULL, GR_GNU, sum_opts, NULL},
	{"sha384sum", NULL, GR_GNU, sum_opts, NULL},
	{"sha512sum", NULL, GR_GNU, sum_opts, NULL},
	{"b2sum", NULL, GR_GNU, b2sum_opts, NULL},
	{"cksum", NULL, GR_GNU, cksum_opts, NULL},
	{"od", NULL, GR_GNU, od_opts, NULL},
	{"du", NULL, GR_GNU, du_opts, NULL},
	{"df", NULL, GR_GNU, df_opts, NULL},
	{"nproc", NULL, GR_GNU, nproc_opts, NULL},
	{"tty", NULL, GR_GNU, tty_opts, NULL},
	{"diff", NULL, GR_GNU, diff_opts, NULL},
	{"cmp", NULL, GR_GNU, cmp_opts, NULL},
	{"sed", NULL, GR_GNU, sed_opts, pol_gr_check_sed},
	{"find", NULL, GR_POSIX, find_opts, pol_gr_check_find},
	{"file", NULL, GR_GNU, file_opts, NULL},
	{"which", "which.debianutils", GR_POSIX, which_opts, NULL},
	{"cd", NULL, GR_POSIX, cd_opts, NULL},
	{"type", NULL, GR_POSIX, type_opts, NULL},
	{"rg", NULL, GR_NOABBREV, rg_opts, NULL},
};

const struct pol_gr_prog *pol_gr_find(const char *name)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(programs); i++)
		if (strcmp(name, programs[i].name) == 0 ||
		    (programs[i].alias && strcmp(name, programs[i].alias) == 0))
			return &programs[i];
	return NULL;
}

const struct pol_gr_prog *pol_gr_all(size_t *n)
{
	*n = WD_ARRAY_SIZE(programs);
	return programs;
}

/* Toolchains whose "--version" is asked before almost every build. */
/* clang-format off */
static const char *const versioned[] = {
	"gcc",	  "g++",     "cc",	  "c++",   "clang",  "clang++", "make",	  "cmake",
	"ninja",  "node",    "npm",	  "npx",   "yarn",   "pnpm",	"python", "python3",
	"pip",	  "pip3",    "go",	  "cargo", "rustc",  "rustup",	"java",	  "javac",
	"ruby",	  "gem",     "perl",	  "php",   "dotnet", "deno",	"bun",	  "tsc",
	"docker", "kubectl", "terraform", "uv",	   "pytest", "meson",	"bazel",
};
/* clang-format on */

static bool version_query(const char *name, char *const *argv, size_t argc)
{
	if (argc != 2)
		return false;
	const char *a = argv[1];
	if (strcmp(a, "--version") != 0 && strcmp(a, "-version") != 0 &&
	    strcmp(a, "version") != 0 && strcmp(a, "-V") != 0 && strcmp(a, "--help") != 0)
		return false;
	for (size_t i = 0; i < WD_ARRAY_SIZE(versioned); i++)
		if (strcmp(name, versioned[i]) == 0)
			return true;
	return false;
}

/* find's expression is not an options list: only its leading -H -L -P are
 * parsed by the table, the rest by pol_gr_check_find. */
static void parse_program(const struct pol_gr_prog *p, char *const *argv, size_t argc,
			  struct pol_gr_parse *ps)
{
	if (p->check == pol_gr_check_find) {
		memset(ps, 0, sizeof(*ps));
		size_t end = 0;
		pol_gr_parse_opts(p->opts, GR_POSIX, true, argv, argc, &end, ps);
		for (size_t i = end; i < argc && !ps->bad; i++)
			if (ps->n < WD_ARRAY_SIZE(ps->items))
				ps->items[ps->n++] = (struct pol_gr_item){.word = argv[i]};
		return;
	}
	if (argc > 1 && pol_gr_obsolete_count(p->name, argv[1])) {
		memset(ps, 0, sizeof(*ps));
		static const struct pol_gr_opt count = {"lines", 'n', GR_ARG, GR_OK};
		ps->items[ps->n++] =
			(struct pol_gr_item){.opt = &count, .word = argv[1], .value = argv[1]};
		size_t end = 0;
		char **rest = (char **)argv + 1;
		pol_gr_parse_opts(p->opts, p->style, false, rest, argc - 1, &end, ps);
		return;
	}
	pol_gr_parse(p, argv, argc, ps);
}

bool pol_readonly_check(const char *name, char *const *argv, size_t argc, const char *cwd,
			struct wd_sb *trace, struct pol_reason *rs)
{
	snprintf(rs->matched, sizeof(rs->matched), "%s", name);
	if (version_query(name, argv, argc)) {
		snprintf(rs->why, sizeof(rs->why), "%s %s only prints version or usage", name,
			 argv[1]);
		if (trace)
			wd_sb_printf(trace, "%s: %s (version query)\n", name, argv[1]);
		return true;
	}
	const struct pol_gr_prog *p = pol_gr_find(name);
	if (!p) {
		snprintf(rs->why, sizeof(rs->why), "%.100s is not a known read-only command", name);
		if (trace)
			wd_sb_printf(trace, "%s: not a fast-path program\n", name);
		return false;
	}
	struct pol_gr_parse *ps = wd_calloc(1, sizeof(*ps));
	parse_program(p, argv, argc, ps);
	if (trace) {
		wd_sb_printf(trace, "%s: ", p->name);
		pol_gr_describe(ps, trace);
		wd_sb_putc(trace, '\n');
	}
	bool ok = false;
	if (ps->bad) {
		snprintf(rs->matched, sizeof(rs->matched), "%s", ps->bad);
		snprintf(rs->why, sizeof(rs->why), "%s: %s, so it is not read-only", p->name,
			 ps->problem);
		goto out;
	}
	for (size_t i = 0; i < ps->n; i++) {
		const struct pol_gr_item *it = &ps->items[i];
		if (it->opt && it->opt->effect != GR_OK && it->opt->effect != GR_CHECKED) {
			char opt[48];
			if (it->opt->shrt)
				snprintf(opt, sizeof(opt), "-%c", it->opt->shrt);
			else
				snprintf(opt, sizeof(opt), "--%s", it->opt->lng);
			snprintf(rs->matched, sizeof(rs->matched), "%s %s", p->name, opt);
			snprintf(rs->why, sizeof(rs->why), "%s %s (given as %.40s) %s", p->name,
				 opt, it->word, pol_gr_effect_name(it->opt->effect));
			goto out;
		}
		bool printer = false;
		for (size_t k = 0; k < WD_ARRAY_SIZE(printers); k++)
			printer |= strcmp(p->name, printers[k]) == 0;
		/* An operand, or an option's value: grep -f, date -f, file -m
		 * read the file they name and may print its lines. */
		const char *path = it->opt ? it->value : it->word;
		if (printer && path && pol_gr_path_prints_secrets(path, cwd)) {
			snprintf(rs->matched, sizeof(rs->matched), "%s", path);
			snprintf(rs->why, sizeof(rs->why),
				 "%s %.80s prints what /proc shows of a process, which may "
				 "hold secrets",
				 p->name, path);
			goto out;
		}
	}
	rs->why[0] = '\0';
	if (p->check && !p->check(p, ps, argv, argc, rs))
		goto out;
	snprintf(rs->why, sizeof(rs->why), "%s is a read-only command with these options", p->name);
	ok = true;
out:
	free(ps);
	return ok;
}
