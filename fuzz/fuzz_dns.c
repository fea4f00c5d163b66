/*
 * fuzz_dns: the session resolver's DNS reader (supervisor/dns_msg.c) on
 * arbitrary bytes. The query comes from the agent and the response from
 * whatever answers the nameserver's address: both are hostile.
 * Input: one byte N, then N bytes of query, then the response.
 */
#include "dns_int.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t qlen = data[0];
	if (qlen > size - 1)
		qlen = size - 1;
	const unsigned char *query = data + 1, *resp = data + 1 + qlen;
	size_t rlen = size - 1 - qlen;
	struct sup_dns_question q;
	struct sup_dns_answer a;
	if (sup_dns_parse_query(query, qlen, &q) == 0) {
		unsigned char out[256 + 16];
		if (q.end <= sizeof(out))
			(void)sup_dns_error(query, &q, SUP_DNS_REFUSED, out);
		(void)sup_dns_metadata_name(q.name);
		(void)sup_dns_parse_answer(resp, rlen, &q, &a);
	}
	/* The whole input as the answer to the question it carries. */
	if (sup_dns_parse_query(data, size, &q) == 0 || q.end) {
		q.id = (uint16_t)(data[0] << 8 | (size > 1 ? data[1] : 0));
		(void)sup_dns_parse_answer(data, size, &q, &a);
	}
	return 0;
}
