/*
 * sock_int.h: the socket decoder's entry for the notification receiver
 * (notify.c hands it the socket calls it receives).
 */
#ifndef WARDEN_SOCK_INT_H
#define WARDEN_SOCK_INT_H

#include <linux/seccomp.h>

struct sbx_sock_event;

/* Decodes the socket call |req| received on listener |nfd|: 0 and *out
 * (caller frees with sbx_sock_event_free()), or -ENOENT when the caller
 * vanished meanwhile (nothing to answer). */
int sbx_sock_decode(int nfd, const struct seccomp_notif *req, struct sbx_sock_event **out);

#endif
