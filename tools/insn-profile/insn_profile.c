// SPDX-License-Identifier: GPL-2.0
/*
 * insn_profile: a QEMU TCG plugin that counts the guest's executed
 * instructions per kernel function, inside windows the guest program opens
 * and closes, and writes them as a table when QEMU exits.
 *
 *   -plugin insn_profile.so,map=System.map,out=FILE
 *
 * Every instruction translated gets, when it executes, an inline add of
 * one to the counter of the symbol its address falls in (System.map's
 * text symbols; one counter for every user-space address, one for kernel
 * addresses no symbol covers).  Inline adds are a few host instructions
 * each and need no helper call; they run all the time, so a window is not
 * a switch but a difference: its counts are the counters at its close
 * minus a copy taken at its open.
 *
 * The guest marks windows with instructions that do nothing: a seven-byte
 * NOP, nopl disp32(%rax) (0f 1f 80 + disp32), whose disp32 is
 * INSN_PROFILE_MAGIC | op (guest-tests/lib/insn_profile.h).  The plugin
 * recognises them when it translates, so only those instructions get a
 * callback; a guest without the plugin executes a NOP.  The ops:
 *   1 open     copy the counters;
 *   2 close    the window's counts (counters minus the copy) are pending;
 *   3 id       executed N times after a close: the window's number is N;
 *   4 round    executed R times after a close: R round trips were done;
 *   5 commit   the pending counts, R and one run are added to window N
 *              (N = 0: dropped, a run the guest does not count, such as
 *              a warm-up).
 * The number and the count are unary so that the guest can pass values
 * it knows only at run time without this plugin reading registers (the
 * 7.2 API cannot); the guest executes them after the close, outside the
 * window and outside the time the benchmark measures.  All of it is
 * deterministic: the same guest run gives the same table.
 *
 * The counters are shared by every vCPU without atomics: this is for
 * single-threaded TCG (-icount, or -accel tcg,thread=single), where the
 * vCPUs take turns on one host thread.  A window counts every vCPU's
 * instructions, as -icount's clock does.
 *
 * The table (FILE), tab-separated:
 *   window <N> runs <k> round_trips <R> instructions <total>
 *   <N> <symbol> <instructions>     (each symbol with any, most first)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* The marker's disp32 without its op: "IPF" in the high bytes. */
#define INSN_PROFILE_MAGIC	0x49504600u
#define MAX_WINDOWS		64

enum op { OP_OPEN = 1, OP_CLOSE, OP_ID, OP_ROUND, OP_COMMIT, OP_MAX };

struct sym {
	uint64_t	addr;
	char		*name;
	size_t		line;	/* in System.map: aliases keep its order */
};

/* Counter 0: user space; 1: kernel, no symbol; 2 + i: syms[i]. */
#define C_USER		0
#define C_KERNEL	1
#define C_FIRST		2

static struct sym *syms;
static size_t nsyms;
/* The kernel's text ends here (the first non-text symbol after it). */
static uint64_t *sym_end;
static uint64_t kernel_start;
static size_t ncounters;
static uint64_t *counters, *snapshot, *pending;
static const char *out_path;

enum state { IDLE, OPEN, CLOSED };
static enum state state;
static unsigned int pending_id;
static uint64_t pending_rounds;
static unsigned long stray;	/* markers out of order */

struct window {
	uint64_t	*counts;
	uint64_t	runs, rounds;
};
static struct window windows[MAX_WINDOWS];

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* For bsearch: by address alone. */
static int cmp_addr(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/*
 * A name the linker script or a macro gives an address that is also a
 * function's (__sched_text_start is __schedule, _stext startup_64): never
 * the name of a range while a function has the same address.
 */
static bool is_label(const char *name)
{
	static const char *const ends[] = { "_text_start", "_text_end" };
	size_t i, n = strlen(name);

	for (i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		size_t m = strlen(ends[i]);

		if (n >= m && !strcmp(name + n - m, ends[i]))
			return true;
	}
	return !strcmp(name, "_stext") || !strcmp(name, "_text") ||
		!strcmp(name, "_etext") || !strncmp(name, "__UNIQUE_ID_", 12);
}

/*
 * System.map: "address type name" lines.  Text symbols become ranges that
 * end where the next symbol of any kind starts, so code is never charged
 * to a function when it lies past the text (module space, the vsyscall
 * page: counted as "kernel, no symbol").
 */
static int load_map(const char *path)
{
	struct sym *all = NULL;
	size_t n = 0, cap = 0, i;
	char line[512], type, name[256];
	unsigned long long addr;
	bool *text = NULL;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "insn_profile: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			all = realloc(all, cap * sizeof(*all));
			text = realloc(text, cap * sizeof(*text));
			if (!all || !text)
				goto nomem;
		}
		all[n].addr = addr;
		all[n].line = n;
		/* the type rides in the name's first byte until sorted */
		all[n].name = malloc(strlen(name) + 2);
		if (!all[n].name)
			goto nomem;
		all[n].name[0] = type;
		strcpy(all[n].name + 1, name);
		n++;
	}
	fclose(f);
	qsort(all, n, sizeof(*all), cmp_sym);
	syms = calloc(n ? n : 1, sizeof(*syms));
	sym_end = calloc(n ? n : 1, sizeof(*sym_end));
	if (!syms || !sym_end)
		goto nomem_closed;
	for (i = 0; i < n; i++) {
		text[i] = is_text(all[i].name[0]);
		if (!text[i])
			continue;
		/*
		 * Aliases (one address): the first in System.map names the
		 * range, unless it is a label and this is not.
		 */
		if (nsyms && syms[nsyms - 1].addr == all[i].addr) {
			if (is_label(syms[nsyms - 1].name) &&
			    !is_label(all[i].name + 1))
				syms[nsyms - 1].name = all[i].name + 1;
			continue;
		}
		syms[nsyms].addr = all[i].addr;
		syms[nsyms].name = all[i].name + 1;
		sym_end[nsyms] = UINT64_MAX;
		nsyms++;
	}
	/* each range ends at the next higher address of any symbol */
	for (i = 0; i < nsyms; i++) {
		struct sym key = { .addr = syms[i].addr };
		struct sym *s = bsearch(&key, all, n, sizeof(*all), cmp_addr);
		size_t j = s ? (size_t)(s - all) : n;

		while (j < n && all[j].addr <= syms[i].addr)
			j++;
		if (j < n)
			sym_end[i] = all[j].addr;
	}
	free(text);
	free(all);	/* the names stay: syms points into them */
	if (!nsyms) {
		fprintf(stderr, "insn_profile: %s has no text symbols\n", path);
		return -1;
	}
	kernel_start = syms[0].addr;
	return 0;
nomem:
	fclose(f);
nomem_closed:
	fprintf(stderr, "insn_profile: out of memory reading %s\n", path);
	return -1;
}

/* The counter of the instruction at @vaddr. */
static size_t counter_of(uint64_t vaddr)
{
	size_t lo = 0, hi = nsyms;

	if (vaddr < kernel_start)
		/* user space (the kernel half starts far above it) */
		return vaddr >> 63 ? C_KERNEL : C_USER;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	return vaddr < sym_end[lo] ? C_FIRST + lo : C_KERNEL;
}

/* The op of a marker instruction, or 0. */
static unsigned int marker_op(struct qemu_plugin_insn *insn)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);
	uint32_t disp;

	if (qemu_plugin_insn_size(insn) != 7 ||
	    b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80)
		return 0;
	disp = b[3] | b[4] << 8 | b[5] << 16 | (uint32_t)b[6] << 24;
	if ((disp & ~0xffu) != INSN_PROFILE_MAGIC)
		return 0;
	disp &= 0xff;
	return disp && disp < OP_MAX ? disp : 0;
}

static void commit(void)
{
	struct window *w;
	size_t i;

	if (!pending_id)
		return;
	if (pending_id >= MAX_WINDOWS) {
		stray++;
		return;
	}
	w = &windows[pending_id];
	if (!w->counts) {
		w->counts = calloc(ncounters, sizeof(*w->counts));
		if (!w->counts) {
			stray++;
			return;
		}
	}
	for (i = 0; i < ncounters; i++)
		w->counts[i] += pending[i];
	w->runs++;
	w->rounds += pending_rounds;
}

static void on_marker(unsigned int vcpu, void *udata)
{
	unsigned int op = (unsigned int)(uintptr_t)udata;
	size_t i;

	(void)vcpu;
	switch (op) {
	case OP_OPEN:
		memcpy(snapshot, counters, ncounters * sizeof(*counters));
		state = OPEN;
		return;
	case OP_CLOSE:
		if (state != OPEN)
			break;
		for (i = 0; i < ncounters; i++)
			pending[i] = counters[i] - snapshot[i];
		pending_id = 0;
		pending_rounds = 0;
		state = CLOSED;
		return;
	case OP_ID:
		if (state != CLOSED)
			break;
		pending_id++;
		return;
	case OP_ROUND:
		if (state != CLOSED)
			break;
		pending_rounds++;
		return;
	case OP_COMMIT:
		if (state != CLOSED)
			break;
		commit();
		state = IDLE;
		return;
	}
	stray++;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		unsigned int op = marker_op(insn);

		qemu_plugin_register_vcpu_insn_exec_inline(insn,
			QEMU_PLUGIN_INLINE_ADD_U64,
			&counters[counter_of(qemu_plugin_insn_vaddr(insn))], 1);
		if (op)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker,
				QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)op);
	}
}

static const char *counter_name(size_t c)
{
	if (c == C_USER)
		return "[user]";
	if (c == C_KERNEL)
		return "[kernel, no symbol]";
	return syms[c - C_FIRST].name;
}

struct row {
	uint64_t	n;
	size_t		c;
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return x->c < y->c ? -1 : x->c > y->c;
}

static void write_table(FILE *f)
{
	struct row *rows = malloc(ncounters * sizeof(*rows));
	unsigned int w;
	size_t i, n;

	fprintf(f, "# insn_profile: instructions per kernel function in the "
		"guest's windows (tools/insn-profile)\n");
	if (stray)
		fprintf(f, "# stray markers: %lu\n", stray);
	if (!rows)
		return;
	for (w = 0; w < MAX_WINDOWS; w++) {
		const struct window *win = &windows[w];
		uint64_t total = 0;

		if (!win->counts)
			continue;
		for (i = n = 0; i < ncounters; i++) {
			total += win->counts[i];
			if (win->counts[i]) {
				rows[n].n = win->counts[i];
				rows[n].c = i;
				n++;
			}
		}
		qsort(rows, n, sizeof(*rows), cmp_row);
		fprintf(f, "window\t%u\truns\t%" PRIu64 "\tround_trips\t%" PRIu64
			"\tinstructions\t%" PRIu64 "\n", w, win->runs,
			win->rounds, total);
		for (i = 0; i < n; i++)
			fprintf(f, "%u\t%s\t%" PRIu64 "\n", w,
				counter_name(rows[i].c), rows[i].n);
	}
	free(rows);
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	FILE *f;

	(void)id;
	(void)udata;
	f = fopen(out_path, "w");
	if (!f) {
		fprintf(stderr, "insn_profile: %s: %s\n", out_path,
			strerror(errno));
		return;
	}
	write_table(f);
	if (fclose(f))
		fprintf(stderr, "insn_profile: %s: %s\n", out_path,
			strerror(errno));
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *map = NULL;
	int i;

	(void)info;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "map=", 4))
			map = argv[i] + 4;
		else if (!strncmp(argv[i], "out=", 4))
			out_path = argv[i] + 4;
		else {
			fprintf(stderr, "insn_profile: unknown argument %s "
				"(map=System.map out=FILE)\n", argv[i]);
			return -1;
		}
	}
	if (!map || !out_path) {
		fprintf(stderr, "insn_profile: needs map=System.map and out=FILE\n");
		return -1;
	}
	if (load_map(map))
		return -1;
	ncounters = C_FIRST + nsyms;
	counters = calloc(ncounters, sizeof(*counters));
	snapshot = calloc(ncounters, sizeof(*snapshot));
	pending = calloc(ncounters, sizeof(*pending));
	if (!counters || !snapshot || !pending) {
		fprintf(stderr, "insn_profile: out of memory\n");
		return -1;
	}
	/* an unwritable table fails the boot now, not after the run */
	{
		FILE *f = fopen(out_path, "w");

		if (!f) {
			fprintf(stderr, "insn_profile: %s: %s\n", out_path,
				strerror(errno));
			return -1;
		}
		fclose(f);
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
