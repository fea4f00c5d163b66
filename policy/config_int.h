/*
 * config_int.h: the parser state and the typed getters that the parts of
 * the config parser share (config_parse.c; used by config.c).
 *
 * See docs/design.md, section "Configuration".
 */
#ifndef WARDEN_POLICY_CONFIG_INT_H
#define WARDEN_POLICY_CONFIG_INT_H

#include "policy_int.h"

#include <cjson/cJSON.h>

/* One parse of a config file: its name, its line map, the errors so far. */
struct parser {
	const char *file;
	struct pol_linemap *lm;
	struct pol_config_errors *errs;
	size_t dropped;
	struct pol_config *c;
};

/* Adds an error at the key |path| (its |nth| occurrence) with the file and
 * line: "FILE:LINE: KEY: what". Past the limit, only counts it. */
void pol_cfg_error(struct parser *p, const char *path, int nth, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* "a string", "a number", ...: what |v| is, for a message. */
const char *pol_cfg_type_name(const cJSON *v);
/* "path.key", or "key" at the top. Caller frees. */
char *pol_cfg_child_path(const char *path, const char *key);
/* Checks an object's keys against |allowed| (a space-separated list) and
 * reports unknown and duplicate keys. Returns false when |v| is not an
 * object. */
bool pol_cfg_check_object(struct parser *p, const cJSON *v, const char *path, const char *allowed,
			  const char *what);
/* The first occurrence of |key| (duplicates are reported by
 * pol_cfg_check_object()). */
const cJSON *pol_cfg_get(const cJSON *obj, const char *key);
/* A non-empty string, or NULL with an error (none when absent and not
 * |required|). Points into |obj|. */
const char *pol_cfg_string(struct parser *p, const cJSON *obj, const char *path, const char *key,
			   bool required);
/* An integer in [|lo|, |hi|] into *out; false when absent, and with an
 * error when it is not such an integer. */
bool pol_cfg_int(struct parser *p, const cJSON *obj, const char *path, const char *key, int lo,
		 int hi, int *out);
/* An array of non-empty strings: NULL-terminated copy, or NULL on error. */
char **pol_cfg_argv(struct parser *p, const cJSON *v, const char *kp, size_t *n);
/* What pol_cfg_list() keeps of the string |s| at |ep|: a copy (taken
 * by the list), or NULL, with an error when it is wrong. */
typedef char *(*pol_cfg_take_fn)(struct parser *p, const char *s, const char *ep, const void *arg);
/* The array of strings |v| at |kp| (of |what|: "strings", "patterns"):
 * what |take| keeps of each, NULL-terminated, *n of them; an error for
 * each element that is not a string. NULL with an error when |v| is not
 * an array. Caller frees. */
char **pol_cfg_list(struct parser *p, const cJSON *v, const char *kp, const char *what,
		    pol_cfg_take_fn take, const void *arg, size_t *n);
/* An array of strings: trimmed; blanks dropped (|drop_blank|) or errors;
 * globs checked (|glob|); absolute required (|absolute|). */
char **pol_cfg_strings(struct parser *p, const cJSON *v, const char *kp, size_t *n, bool drop_blank,
		       bool glob, bool absolute);

/* "network": {"allow": [...], "deny": [...]} (network.c). */
void pol_cfg_parse_network(struct parser *p, const cJSON *v, const char *kp);

#endif
