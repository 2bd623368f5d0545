/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compat.h - constants that Debian 12's headers (libnuma 2.0.16, Linux 6.1
 * uapi) may lack.  Values are the kernel's ABI; each is only defined when the
 * system headers do not already provide it.
 */
#ifndef PMP_COMPAT_H
#define PMP_COMPAT_H

#include <numaif.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#ifndef MPOL_DEFAULT
# define MPOL_DEFAULT 0
#endif
#ifndef MPOL_PREFERRED
# define MPOL_PREFERRED 1
#endif
#ifndef MPOL_BIND
# define MPOL_BIND 2
#endif
#ifndef MPOL_INTERLEAVE
# define MPOL_INTERLEAVE 3
#endif
#ifndef MPOL_LOCAL
# define MPOL_LOCAL 4
#endif
#ifndef MPOL_PREFERRED_MANY
# define MPOL_PREFERRED_MANY 5
#endif
/* Linux 6.9 */
#ifndef MPOL_WEIGHTED_INTERLEAVE
# define MPOL_WEIGHTED_INTERLEAVE 6
#endif

#ifndef MPOL_F_STATIC_NODES
# define MPOL_F_STATIC_NODES (1 << 15)
#endif
#ifndef MPOL_F_RELATIVE_NODES
# define MPOL_F_RELATIVE_NODES (1 << 14)
#endif
#ifndef MPOL_F_NUMA_BALANCING
# define MPOL_F_NUMA_BALANCING (1 << 13)
#endif

#ifndef __NR_pidfd_open
# define __NR_pidfd_open 434
#endif
/* Linux 6.9: a pidfd that refers to one thread rather than a process. */
#ifndef PIDFD_THREAD
# define PIDFD_THREAD 0x80	/* O_EXCL */
#endif

/* statfs(2) magic of the pidfd filesystem (Linux 6.9), whose inodes are
 * unique per process and so can pin one. */
#ifndef PIDFS_MAGIC
# define PIDFS_MAGIC 0x50494446
#endif

/* task->flags bit reported in /proc/PID/stat field 9 */
#define PMP_PF_KTHREAD 0x00200000u

/* PROCMAP_QUERY (Linux 6.11): an ioctl on /proc/PID/maps that returns the
 * one mapping holding an address.  Named apart from <linux/fs.h>'s struct
 * procmap_query, whose layout (104 bytes) it repeats. */
struct pmp_procmap_query {
	uint64_t size, query_flags, query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define PMP_PROCMAP_QUERY _IOWR('f', 17, struct pmp_procmap_query)
#define PMP_PROCMAP_VMA_READABLE 0x01
#define PMP_PROCMAP_VMA_WRITABLE 0x02
#define PMP_PROCMAP_VMA_EXECUTABLE 0x04
#define PMP_PROCMAP_VMA_SHARED 0x08

/* PAGEMAP_SCAN (Linux 6.7): an ioctl on /proc/PID/pagemap that reports
 * ranges of pages by category; PAGE_IS_HUGE marks a transparent huge page
 * (or hugetlb).  Spelled out for C libraries whose <linux/fs.h> lacks it;
 * the layouts repeat the kernel's (96 and 24 bytes). */
struct pmp_pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
struct pmp_page_region {
	uint64_t start, end, categories;
};
#define PMP_PAGEMAP_SCAN _IOWR('f', 16, struct pmp_pm_scan_arg)
#define PMP_PAGE_IS_HUGE (1 << 6)

#endif
