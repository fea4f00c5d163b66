/*
 * kinds.c: the supervisor's table of request kinds: for each enum
 * pol_kind, how the pipeline follows its caller, answers it, tells it,
 * and shows it to the desk and the terminal prompt. A new kind is one
 * entry here; its functions live with their part (answer.c, pipeline.c,
 * pending.c, viewq.c, desk.c, tty.c). Policy's part of a kind is in
 * policy/kinds.c, the judge's in judge/kinds.c.
 *
 * See docs/design.md, sections "Requests" and "Where to add things".
 */
#include "sup.h"

static const struct sup_kind_ops kinds[POL_KIND_COUNT] = {
	[POL_EXEC] =
		{
			.traced = true,
			.no_fast_path = false,
			.told_as = "exec of ",
			.verb = sup_exec_verb,
			.machinery = sup_exec_machinery,
			.waits = sup_exec_waits,
			.allow = sup_exec_allow,
			.refuse = sup_exec_refuse,
			.cwd = sup_exec_cwd,
			.command = sup_exec_command,
			.prompt = sup_exec_prompt,
		},
	[POL_OPEN] =
		{
			.traced = false,
			/* The view asks only about opens that need a decision
			 * (a sensitive or control file, a gated place). */
			.no_fast_path = true,
			.told_as = "",
			.verb = sup_open_verb,
			.machinery = sup_open_machinery,
			.waits = sup_open_waits,
			.allow = sup_open_allow,
			.refuse = sup_open_refuse,
			.cwd = sup_open_cwd,
			.command = sup_open_command,
			.prompt = sup_open_prompt,
		},
	[POL_CONNECT] =
		{
			/* An IP destination (connect.c); a Unix socket outside
			 * the sandbox is decided at the boundary (sockets.c)
			 * and only audited with this kind. */
			.traced = false,
			.no_fast_path = false,
			.told_as = "connect to ",
			.verb = sup_connect_verb,
			.machinery = sup_connect_machinery,
			.waits = sup_connect_waits,
			.allow = sup_connect_allow,
			.refuse = sup_connect_refuse,
			.cwd = sup_connect_cwd,
			.command = sup_connect_command,
			.prompt = sup_connect_prompt,
		},
};

const struct sup_kind_ops *sup_kind_ops(enum pol_kind k)
{
	return (unsigned)k < POL_KIND_COUNT ? &kinds[k] : NULL;
}
