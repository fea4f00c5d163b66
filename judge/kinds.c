/*
 * kinds.c: the judge's table of request kinds: what the system prompt
 * says warden stops of each kind. A kind the pipeline decides is one the
 * judge may see; a new kind is one entry here (the prompt lists every
 * kind with text, in the enum's order).
 *
 * See docs/design.md, sections "The judge" and "Where to add things".
 */
#include "judge.h"

static const struct jdg_kind_ops kinds[POL_KIND_COUNT] = {
	[POL_EXEC] = {.stops = "every program the agent is about to run"},
	[POL_OPEN] = {.stops = "every open of a sensitive file"},
	/* An IP destination. A Unix socket outside the sandbox has this kind
	 * in the audit too, but is decided at the boundary by the config's
	 * "sockets" list and never reaches the judge. */
	[POL_CONNECT] = {.stops = "every new network destination a process of the agent's tree "
				  "connects or sends to"},
};

const struct jdg_kind_ops *jdg_kind_ops(enum pol_kind k)
{
	return (unsigned)k < POL_KIND_COUNT ? &kinds[k] : NULL;
}
