/*
 * profiles.c: the table of agent harness profiles: for each harness warden
 * knows, what it needs from the sandbox (the keys it reaches its model
 * with, the places in HOME it writes) and which of its own machinery
 * warden recognises.
 *
 * A leaf of policy/. See docs/design.md, section "Agent harnesses".
 */
#include "policy_int.h"

/* The keys each harness needs to talk to its model: its own API key. */
static const char *const claude_env[] = {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
					 "CLAUDE_CODE_OAUTH_TOKEN", NULL};
static const char *const codex_env[] = {"OPENAI_API_KEY", "CODEX_API_KEY", NULL};
/* aider talks to whichever provider it is pointed at. */
static const char *const aider_env[] = {"OPENAI_API_KEY",
					"ANTHROPIC_API_KEY",
					"GEMINI_API_KEY",
					"GROQ_API_KEY",
					"DEEPSEEK_API_KEY",
					"OPENROUTER_API_KEY",
					"MISTRAL_API_KEY",
					"COHERE_API_KEY",
					"XAI_API_KEY",
					"AZURE_API_KEY",
					"FIREWORKS_API_KEY",
					"TOGETHERAI_API_KEY",
					NULL};

/* What each harness must be able to write in the home directory (its
 * configuration and session state); its temporary files are under /tmp,
 * the session's own and writable. */
static const char *const claude_home[] = {".claude", ".claude.json", ".claude.json.backup",
					  ".cache/claude", NULL};
static const char *const codex_home[] = {".codex", NULL};
static const char *const aider_home[] = {".aider", ".cache/aider", NULL};

static const char *const none[] = {NULL};

static const struct pol_harness_profile profiles[] = {
	[POL_HARNESS_NONE] = {POL_HARNESS_NONE, "none", none, none, NULL, false},
	[POL_HARNESS_CLAUDE_CODE] = {POL_HARNESS_CLAUDE_CODE, "claude-code", claude_env,
				     claude_home, NULL, false},
	[POL_HARNESS_CODEX] = {POL_HARNESS_CODEX, "codex", codex_env, codex_home,
			       "/@openai/codex/bin/codex.js", true},
	[POL_HARNESS_AIDER] = {POL_HARNESS_AIDER, "aider", aider_env, aider_home, NULL, false},
};

const struct pol_harness_profile *pol_harness_profile(enum pol_harness h)
{
	return (unsigned)h < WD_ARRAY_SIZE(profiles) ? &profiles[h] : &profiles[POL_HARNESS_NONE];
}

const char *pol_harness_name(enum pol_harness h)
{
	return (unsigned)h < WD_ARRAY_SIZE(profiles) ? profiles[h].name : "unknown";
}
