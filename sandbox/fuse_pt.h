/*
 * fuse_pt.h: the few FUSE passthrough definitions the view needs that
 * Debian 12's headers (linux-libc-dev 6.1, libfuse 3.14) lack. Each mirrors
 * the kernel's include/uapi/linux/fuse.h (protocol 7.40, Linux 6.9+); the
 * layouts are the ABI and never change.
 */
#ifndef WARDEN_FUSE_PT_H
#define WARDEN_FUSE_PT_H

#include <stdint.h>
#include <sys/ioctl.h>

/* FUSE_PASSTHROUGH: bit 37 of the 64-bit INIT flags, i.e. bit 5 of flags2
 * (which the kernel reads only with FUSE_INIT_EXT, bit 30 of flags). */
#define PT_INIT_EXT	      (1u << 30)
#define PT_FLAGS2_PASSTHROUGH (1u << 5)
/* fuse_open_out.open_flags: the open's I/O goes to the backing file. */
#define PT_FOPEN_PASSTHROUGH (1u << 7)

/* struct fuse_init_in: the fields the view reads (the kernel sends 104
 * bytes with FUSE_INIT_EXT; flags2 follows flags at offset 16). */
struct pt_init_in {
	uint32_t major;
	uint32_t minor;
	uint32_t max_readahead;
	uint32_t flags;
	uint32_t flags2;
};

/* struct fuse_init_out as of 7.40: max_stack_depth is carved out of the
 * former unused[0]. 64 bytes, as libfuse 3.14 sends it. */
struct pt_init_out {
	uint32_t major;
	uint32_t minor;
	uint32_t max_readahead;
	uint32_t flags;
	uint16_t max_background;
	uint16_t congestion_threshold;
	uint32_t max_write;
	uint32_t time_gran;
	uint16_t max_pages;
	uint16_t map_alignment;
	uint32_t flags2;
	uint32_t max_stack_depth;
	uint32_t unused[6];
};

/* struct fuse_open_out with backing_id in the former padding. */
struct pt_open_out {
	uint64_t fh;
	uint32_t open_flags;
	int32_t backing_id;
};

/* struct fuse_backing_map and the two ioctls on the /dev/fuse fd. */
struct pt_backing_map {
	int32_t fd;
	uint32_t flags;
	uint64_t padding;
};
#define PT_DEV_IOC_BACKING_OPEN	 _IOW(229, 1, struct pt_backing_map)
#define PT_DEV_IOC_BACKING_CLOSE _IOW(229, 2, uint32_t)

_Static_assert(sizeof(struct pt_init_out) == 64, "fuse_init_out is 64 bytes");
_Static_assert(sizeof(struct pt_open_out) == 16, "fuse_open_out is 16 bytes");
_Static_assert(sizeof(struct pt_backing_map) == 16, "fuse_backing_map is 16 bytes");

#endif
