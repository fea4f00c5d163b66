/*
 * judge_int.h: helpers shared by the judge's files and its tests. Not part
 * of the public interface.
 */
#ifndef WARDEN_JUDGE_INT_H
#define WARDEN_JUDGE_INT_H

#include "common.h"
#include "judge.h"

/* Appends |n| bytes of |s| escaped for a prompt section: & < > " as
 * entities, control bytes as \xNN. */
void jdg_esc(struct wd_sb *sb, const char *s, size_t n);

/* Appends |s| (|len| bytes) to |sb|, cut in the middle to at most |target|
 * bytes when longer (never splitting a UTF-8 sequence or an entity), the
 * cut marked "[... N bytes cut ...]". If |target| is smaller than the
 * marker, only the marker is written. Returns the bytes appended. */
size_t jdg_cut_middle(struct wd_sb *sb, const char *s, size_t len, size_t target);

/* The wire names of the verdict's values, indexed by enum jdg_decision and
 * enum jdg_risk: the verdict parser accepts exactly these and the request
 * body's schema lists them. */
#define JDG_DECISIONS ((size_t)JDG_DECISION_ESCALATE + 1)
#define JDG_RISKS     ((size_t)JDG_RISK_CRITICAL + 1)
extern const char *const jdg_decision_names[JDG_DECISIONS];
extern const char *const jdg_risk_names[JDG_RISKS];

/* The request body for |api|. Caller frees. */
char *jdg_body_build(enum jdg_api api, const char *model, const char *prefix, const char *message);

#endif
