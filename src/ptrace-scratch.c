/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace-scratch.c - the ptrace backend's scratch page: the private
 * mapping it makes in a process for what the injected calls read (the
 * node mask, the signal engine's memfd name), its proof that the page is
 * still the one it made, the node mask in it, and its end.  Why it is made
 * as it is: ptrace.h.
 */
#include "config.h"

#include "ptrace.h"

#if PMP_PTRACE_SUPPORTED

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ptrace-mem.h"
#include "ptrace-tracee.h"

/* Sized for the largest mask and a name; only the pages written are ever
 * backed. */
size_t scratch_len(void)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t pg = page > 0 ? (size_t)page : 4096;

	return (SCRATCH_NAME_AT + SCRATCH_NAME_MAX + pg - 1) / pg * pg;
}

/* The session's page, proven still to be the one it mapped; else a new
 * one, mapped by the thread.  What the old address holds now is the
 * target's: it is forgotten, neither written nor unmapped.  MAP_NORESERVE
 * keeps the page from merging with the target's own anonymous mappings,
 * which would make its extent unprovable; MAP_POPULATE has it in memory
 * before the target could register it with userfaultfd (the engine
 * writes only to pages present).  0, or -1 with the verdict said. */
int scratch_ensure(struct tracee *t)
{
	struct ptrace_session *s = t->s;
	struct tracee_call c = { .nr = __NR_mmap, .arg = { 0, scratch_len(), PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_POPULATE, (unsigned long)-1, 0 } };
	long rv;

	if (s->page && tracee_page_is_ours(t, s->page, s->page_len, s->cookie))
		return 0;
	s->page = 0;
	if (tracee_make_call(t, &c, &rv) < 0)
		return -1;
	if (tracee_is_error(rv))
		return tracee_verdict(t, FAIL_INJECTION, (int)-rv, "mmap of a scratch page in the thread failed");
	if (rv == 0 || rv % 4096 != 0)
		return tracee_verdict(t, FAIL_INJECTION, EPROTO, "mmap returned nonsense");
	/* MAP_POPULATE: the page is in memory unless the target took it
	 * away (or, rarely, it was not populated).  Either way it is left,
	 * not unmapped: what holds the address now may be the target's. */
	if (tracee_mem_write(t->tid, (unsigned long)rv, &s->cookie, sizeof(s->cookie)) < 0)
		return tracee_failed(t, errno, "cannot write the scratch page");
	s->page = (unsigned long)rv;
	s->page_len = scratch_len();
	return 0;
}

/* The session's page unmapped by the thread, if it is still the one. */
int scratch_unmap(struct tracee *t)
{
	struct ptrace_session *s = t->s;
	struct tracee_call c = { .nr = __NR_munmap, .arg = { s->page, s->page_len } };
	long rv;

	if (!s->page)
		return 0;
	if (!tracee_page_is_ours(t, s->page, s->page_len, s->cookie)) {
		s->page = 0;
		return 0;
	}
	if (tracee_make_call(t, &c, &rv) < 0)
		return -1;
	if (tracee_is_error(rv))
		return tracee_verdict(t, FAIL_INJECTION, (int)-rv, "munmap of the scratch page failed");
	s->page = 0;
	return 0;
}

size_t scratch_mask_bytes(const struct ptrace_request *req)
{
	const size_t bits = 8 * sizeof(unsigned long);

	if (!req->mask || req->maxnode <= 1)
		return 0;
	return (req->maxnode - 1 + bits - 1) / bits * sizeof(unsigned long);
}

/* The request's node mask in the session's page; its address in *at.
 * The mask is written while the page is proven the session's, and then
 * left there for every thread after: proving it again for each thread
 * (maps, the cookie) cost more than the rest of the thread's work.  What
 * the target does to that copy since is its own doing, as if it had set
 * its policy itself.  But the mask must still be in memory (pagemap),
 * since the kernel reads it inside the thread's call: emptied and
 * registered with userfaultfd, it would hold the call, and the thread,
 * as long as the target likes.  A mask not in memory, or a page unmapped
 * (EFAULT), and `renew' make sure of a page again. */
int scratch_mask(struct tracee *t, size_t len, bool renew, unsigned long *at)
{
	struct ptrace_session *s = t->s;

	if (renew || !s->page || s->mask_len != len || memcmp(s->mask, t->req->mask, len) != 0 ||
	    tracee_mem_present(t->tid, s->page + SCRATCH_MASK_AT, len) < 0) {
		s->mask_len = 0;
		if (scratch_ensure(t) < 0)
			return -1;
		if (tracee_mem_write(t->tid, s->page + SCRATCH_MASK_AT, t->req->mask, len) < 0)
			return tracee_failed(t, errno, "cannot write the scratch page");
		memcpy(s->mask, t->req->mask, len);
		s->mask_len = len;
	}
	*at = s->page + SCRATCH_MASK_AT;
	return 0;
}

#endif /* PMP_PTRACE_SUPPORTED */
