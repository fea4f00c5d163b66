/*
 * spawn_int.h: what the supervisor's side (spawn.c) and the sandbox's side
 * (spawn_child.c) of the set-up share: the set-up socket's messages
 * (spawn_msg.c) and the slots of the FUSE views. Not part of the sandbox's
 * interface.
 */
#ifndef WARDEN_SPAWN_INT_H
#define WARDEN_SPAWN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sandbox.h"

enum {
	MSG_VIEW = 'V',	    /* init -> sup: the FUSE fd */
	MSG_HELLO = 'H',    /* agent -> sup: its pid comes with the credentials */
	MSG_LISTENER = 'L', /* agent -> sup: text "landlock=N fd=M", M the listener */
	MSG_GO = 'G',	    /* sup -> agent: attached */
	MSG_ACK = 'A',	    /* sup -> init/agent: go on */
	MSG_FAIL = 'E',	    /* init/agent -> sup: what failed */
	MSG_EXIT = 'X',	    /* init -> sup: the agent's wait status, text "%d" */
	MSG_WARN = 'W',	    /* init -> sup: a set-up step done otherwise, text */
};

struct sbx_msg {
	char type;
	char text[512];
	int fd;	   /* received fd (O_CLOEXEC) or -1 */
	pid_t pid; /* the sender's pid in our namespace (SO_PASSCRED) */
};

/* Sends one message: a type byte, optional text, optional fd. 0 or -errno. */
int sbx_msg_send(int sock, char type, const char *text, int fd);
/* Receives one message into |m|. 0 or -errno. */
int sbx_msg_recv(int sock, struct sbx_msg *m);

/*
 * The FUSE views the sandbox mounts, in this order: the markers views
 * (outermost first: the user's home), the project's (when cfg->view_dir is
 * set), then one per gated place. The project and gated places usually lie
 * inside a markers view: each is mounted over the entry the markers view
 * serves for it, so it must come after. As root the supervisor makes each
 * mount (mnt) and keeps its FUSE fd; in a user namespace init mounts each
 * and sends the fd.
 */
enum sbx_view_kind { VIEW_MARKERS, VIEW_PROJECT, VIEW_GATE };

struct sbx_view_slot {
	const char *dir;
	mode_t type; /* S_IFDIR, or S_IFREG for a gated file */
	enum sbx_view_kind kind;
	size_t index; /* in cfg->marker_dirs or cfg->gate_dirs */
	int mnt, fuse;
};

/* A fast subtree of the split view: a detached bind (made and marked by
 * the supervisor) that init attaches over the project view's entry |rel|. */
struct sbx_fast_slot {
	const char *rel;
	int mnt;
};

/* How |v| is named in a message for a person: "the project view", ... */
const char *sbx_view_slot_what(const struct sbx_view_slot *v);

/* init: sets up the sandbox on |sock|, forks the agent and reaps. */
void __attribute__((noreturn))
sbx_init_main(const struct sbx_spawn_config *cfg, int sock, uid_t uid, gid_t gid, bool userns,
	      struct sbx_view_slot *views, size_t nviews, struct sbx_fast_slot *fast, size_t nfast);

#endif
