/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * interrupt.h - SIGINT, SIGTERM and SIGHUP end a run at a thread boundary:
 * the handler only notes the signal; the walks stop visiting when they see
 * it (the ptrace engine holds these signals while it holds a thread, so
 * they are seen after the thread is released); the report says what was
 * done and what was not; then the tool dies of the same signal, so that
 * the shell sees 128 + its number.
 */
#ifndef PMP_INTERRUPT_H
#define PMP_INTERRUPT_H

/* Catch SIGINT, SIGTERM and SIGHUP from now on. */
void interrupt_catch(void);

/* The signal caught, or 0. */
int interrupt_signal(void);

/* n more threads of the targets named that the walk found but did not
 * visit because of the interruption. */
void interrupt_left(unsigned long n);

/* How many threads interrupt_left counted. */
unsigned long interrupt_unreached(void);

/* If a signal was caught: die of it (its default action restored and
 * unblocked).  Returns only if none was caught, or if dying failed. */
void interrupt_die(void);

#endif
