/*
 * fuzz_config: pol_config_parse() on any bytes. A config that parses must
 * serialise and parse again; every error must carry a key and a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

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
	if (pol_config_parse(text, size, "fuzz.json", &c, &e) == 0) {
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
