/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tidset.c - the set of task IDs a walk has visited.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "tidset.h"

/* Slots are a power of two, so an ID's first slot is a mask away. */
static size_t slot_of(pid_t id, size_t cap)
{
	return (size_t)((uint32_t)id * 2654435761u) & (cap - 1);
}

int tidset_reserve(struct tidset *s, size_t n)
{
	size_t cap = s->cap ? s->cap : 256;
	pid_t *slots;

	while (cap / 2 < n)
		cap *= 2;
	if (cap == s->cap)
		return 0;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < s->cap; i++) {
		pid_t t = s->slots[i];
		size_t j;

		if (!t)
			continue;
		for (j = slot_of(t, cap); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = t;
	}
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	return 0;
}

int tidset_add(struct tidset *s, pid_t id)
{
	size_t j;

	if ((s->used + 1) * 2 > s->cap && tidset_reserve(s, s->cap ? s->cap : 1) < 0)
		return -1;
	for (j = slot_of(id, s->cap); s->slots[j]; j = (j + 1) & (s->cap - 1))
		if (s->slots[j] == id)
			return 0;
	s->slots[j] = id;
	s->used++;
	return 1;
}

bool tidset_has(const struct tidset *s, pid_t id)
{
	if (!s->cap)
		return false;
	for (size_t j = slot_of(id, s->cap); s->slots[j]; j = (j + 1) & (s->cap - 1))
		if (s->slots[j] == id)
			return true;
	return false;
}

void tidset_release(struct tidset *s)
{
	free(s->slots);
	s->slots = NULL;
	s->cap = s->used = 0;
}
