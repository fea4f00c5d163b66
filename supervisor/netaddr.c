/*
 * netaddr.c: whether an IP address is this host's own, asked of the
 * kernel. A connection to the host's own services (a database, a dev
 * server, Docker's API on loopback, a service bound to the host's LAN
 * address) is hard-denied unless the config lists the address, so the
 * question has to be the kernel's: whatever routes to this host counts,
 * not only what a name or a fixed list says.
 *
 * The kernel's answer is bind(): a socket may bind only an address the
 * host has (its interfaces, its "local" routes), unless the caller asks
 * for a non-local bind, which a fresh socket without IP_FREEBIND does not
 * (a host with net.ipv4.ip_nonlocal_bind=1 makes every address local:
 * everything is refused unless listed, the safe side).
 *
 * See docs/design.md, section "The network".
 */
#include "sup.h"

#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Whether a fresh UDP socket of |family| binds |sa|: 1 yes, 0 no, -1
 * when the socket could not be made. The descriptor is closed before
 * returning and is O_CLOEXEC meanwhile: nothing inherits it. */
static int binds(int family, const struct sockaddr *sa, socklen_t len)
{
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int rc = bind(fd, sa, len);
	close(fd);
	return rc == 0;
}

static bool local4(const uint8_t *a)
{
	/* 127.0.0.0/8 is loopback and 0.0.0.0/8 "this host": both reach
	 * it, whatever bind() says of an address in them. */
	if (a[0] == 127 || a[0] == 0)
		return true;
	struct sockaddr_in sin = {.sin_family = AF_INET};
	memcpy(&sin.sin_addr, a, 4);
	return binds(AF_INET, (const struct sockaddr *)&sin, sizeof(sin)) != 0;
}

static bool local6(const uint8_t *a)
{
	static const uint8_t zero[16], one[16] = {[15] = 1};
	if (memcmp(a, zero, 16) == 0 || memcmp(a, one, 16) == 0)
		return true;
	struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6};
	memcpy(&sin6.sin6_addr, a, 16);
	int rc = binds(AF_INET6, (const struct sockaddr *)&sin6, sizeof(sin6));
	if (rc != 0)
		return true; /* bound, or no socket to ask with */
	/* A link-local address is the host's only on its interface: the
	 * bind needs that interface's scope. */
	if (!(a[0] == 0xfe && (a[1] & 0xc0) == 0x80))
		return false;
	struct if_nameindex *ifs = if_nameindex();
	if (!ifs)
		return true;
	bool local = false;
	for (struct if_nameindex *i = ifs; i->if_index && !local; i++) {
		sin6.sin6_scope_id = i->if_index;
		local = binds(AF_INET6, (const struct sockaddr *)&sin6, sizeof(sin6)) != 0;
	}
	if_freenameindex(ifs);
	return local;
}

bool sup_addr_local(int family, const uint8_t *addr)
{
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};
	if (!addr)
		return true;
	if (family == AF_INET6 && memcmp(addr, mapped, 12) == 0)
		return local4(addr + 12);
	if (family == AF_INET)
		return local4(addr);
	if (family == AF_INET6)
		return local6(addr);
	return true;
}
