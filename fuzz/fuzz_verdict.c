/*
 * fuzz_verdict: the judge's strict verdict parser and both response
 * envelopes, on arbitrary bytes. The model's answer is shaped by whatever a
 * prompt injection put in front of it, so these parsers read hostile input.
 */
#include "judge.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	char *err = NULL;
	struct jdg_verdict v;
	if (jdg_verdict_parse(text, size, &v, &err) == 0)
		(void)jdg_verdict_outcome(&v);
	free(err);
	err = NULL;
	for (int api = JDG_API_OPENAI; api <= JDG_API_ANTHROPIC; api++) {
		char *content = NULL;
		struct jdg_usage usage;
		if (jdg_envelope_parse((enum jdg_api)api, text, size, &content, &usage, &err) ==
			    0 &&
		    content) {
			if (jdg_verdict_parse(content, strlen(content), &v, &err) == 0)
				(void)jdg_verdict_outcome(&v);
		}
		free(err);
		err = NULL;
		free(content);
	}
	free(text);
	return 0;
}
