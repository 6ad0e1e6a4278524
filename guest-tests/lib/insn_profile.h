/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Windows for the instruction profiler, tools/insn-profile/insn_profile.c
 * (a QEMU TCG plugin; variant bench-icount-profile): what it counts
 * between insn_profile_open() and insn_profile_close() goes to window N,
 * divided there by the round trips the guest says it did.
 *
 * The markers are NOPs, nopl disp32(%rax), with the op in disp32's low
 * byte: without the plugin each costs one instruction and does nothing
 * (x86-64 only; elsewhere they are empty).  close() passes the window's
 * number and round trips as that many executions of two markers
 * (the plugin cannot read registers), after the window has closed: time
 * a benchmark takes before close() is not changed by them.
 */
#ifndef INSN_PROFILE_H
#define INSN_PROFILE_H

/* tools/insn-profile/insn_profile.c: INSN_PROFILE_MAGIC and its ops */
#define INSN_PROFILE_MAGIC	0x49504600u
#define INSN_PROFILE_OPEN	1
#define INSN_PROFILE_CLOSE	2
#define INSN_PROFILE_ID		3
#define INSN_PROFILE_ROUND	4
#define INSN_PROFILE_COMMIT	5
#define INSN_PROFILE_WINDOWS	64

#if defined(__x86_64__)
/* "memory": the compiler keeps the window's work on its side of it */
#define INSN_PROFILE_MARK(op)						\
	__asm__ __volatile__("nopl %c0(%%rax)"				\
			     : : "i" (INSN_PROFILE_MAGIC | (op)) : "memory")
#else
#define INSN_PROFILE_MARK(op)	__asm__ __volatile__("" : : : "memory")
#endif

static inline void insn_profile_open(void)
{
	INSN_PROFILE_MARK(INSN_PROFILE_OPEN);
}

/*
 * Close the window: what was counted since insn_profile_open() is added
 * to window @window (1 .. INSN_PROFILE_WINDOWS - 1) with @rounds round
 * trips.
 */
static inline void insn_profile_close(unsigned int window, unsigned long rounds)
{
	INSN_PROFILE_MARK(INSN_PROFILE_CLOSE);
	while (window--)
		INSN_PROFILE_MARK(INSN_PROFILE_ID);
	while (rounds--)
		INSN_PROFILE_MARK(INSN_PROFILE_ROUND);
	INSN_PROFILE_MARK(INSN_PROFILE_COMMIT);
}

#endif /* INSN_PROFILE_H */
