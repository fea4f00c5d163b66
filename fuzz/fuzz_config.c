/*
 * fuzz_config: pol_config_parse() on any bytes. A config that parses must
 * serialise and parse again; every error must carry a key and a message.
 * The same bytes are a network entry, and a connection named by them (to
 * an address made of their first bytes) is decided under the config.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>

#include "policy.h"

/* A connection to the address in the first bytes of |data|, named |name|,
 * decided under |c| (may be NULL). */
static void decide_connect(const uint8_t *data, size_t size, const char *name,
			   const struct pol_config *c)
{
	const char *names[] = {name, "a.test", NULL};
	struct pol_connect_desc d = {
		.family = size && (data[0] & 1) ? AF_INET6 : AF_INET,
		.port = size > 1 ? data[1] : 443,
		.names = names,
		.local = size > 2 && (data[2] & 1),
		.harness = size > 2 && (data[2] & 2),
	};
	memcpy(d.addr, data, size < 16 ? size : 16);
	struct pol_request *r = pol_request_connect(&d);
	if (!r)
		abort();
	struct pol_decision out;
	pol_decide(r, c, NULL, NULL, 0, &out);
	free(pol_request_json(r));
	free(pol_request_summary(r));
	pol_request_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct pol_config *c = NULL;
	struct pol_config_errors e;
	const char *why = NULL;
	if (!pol_net_entry_valid(text, &why) && !why)
		abort(); /* a refused entry says why */
	if (pol_config_parse(text, size, "fuzz.json", &c, &e) == 0) {
		decide_connect(data, size, text, c);
		pol_config_set_paths(c, "/work/proj", "/home/u");
		char *j = pol_config_to_json(c);
		struct pol_config *c2 = NULL;
		struct pol_config_errors e2;
		if (pol_config_parse(j, strlen(j), "again.json", &c2, &e2) != 0)
			abort(); /* what we write we must read back */
		pol_config_free(c2);
		free(j);
		const char *m;
		(void)pol_is_sensitive(c, "a/.env", &m);
		(void)pol_is_write_protected(c, "a/b/c");
		pol_config_free(c);
	} else {
		decide_connect(data, size, text, NULL);
		if (e.count == 0)
			abort();
		for (size_t i = 0; i < e.count; i++)
			if (!e.items[i].message[0] || !e.items[i].key[0])
				abort();
		pol_config_errors_free(&e);
	}
	free(text);
	return 0;
}
