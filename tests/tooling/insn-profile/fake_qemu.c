// SPDX-License-Identifier: GPL-2.0
/*
 * A stand-in for QEMU's side of the plugin API, as much of it as
 * tools/insn-profile/insn_profile.c uses: it installs the plugin, has it
 * translate one block of instructions (kernel functions of the System.map
 * the test wrote, user space, the guest's markers), "executes" them in
 * the order below, running each instruction's callback and then its
 * inline add as QEMU 7.2's generated code does, and ends with the atexit
 * callback, which writes the table.  tests/tooling/insn-profile.bats.
 *   fake_qemu insn_profile.so map=FILE out=FILE
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

struct qemu_plugin_insn {
	uint64_t			vaddr;
	uint8_t				data[8];
	size_t				size;
	uint64_t			*counter;
	uint64_t			imm;
	qemu_plugin_vcpu_udata_cb_t	cb;
	void				*udata;
};

struct qemu_plugin_tb {
	size_t				n;
	struct qemu_plugin_insn		*insn;
};

static qemu_plugin_vcpu_tb_trans_cb_t trans;
static qemu_plugin_udata_cb_t atexit_cb;
static void *atexit_udata;

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb)
{
	(void)id;
	trans = cb;
}

void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata)
{
	(void)id;
	atexit_cb = cb;
	atexit_udata = userdata;
}

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb)
{
	return tb->n;
}

struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx)
{
	return &tb->insn[idx];
}

const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn)
{
	return insn->data;
}

size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn)
{
	return insn->size;
}

uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn)
{
	return insn->vaddr;
}

void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
						enum qemu_plugin_op op,
						void *ptr, uint64_t imm)
{
	if (op != QEMU_PLUGIN_INLINE_ADD_U64)
		abort();
	insn->counter = ptr;
	insn->imm = imm;
}

void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags,
					    void *userdata)
{
	(void)flags;
	insn->cb = cb;
	insn->udata = userdata;
}

/* The block: what each letter of a run executes. */
enum { A, B, NOSYM, USER, OPEN, CLOSE, ID, ROUND, COMMIT, FAKE, N };

static struct qemu_plugin_insn block[N] = {
	[A]	= { 0xffffffff81000004ull, { 0x90 }, 1 },
	[B]	= { 0xffffffff81000018ull, { 0x90 }, 1 },
	/* past f_b's end: a data symbol starts at ...20 */
	[NOSYM]	= { 0xffffffff81000024ull, { 0x90 }, 1 },
	[USER]	= { 0x401000, { 0x90 }, 1 },
	[OPEN]	= { 0x401001, { 0x0f, 0x1f, 0x80, 1, 0x46, 0x50, 0x49 }, 7 },
	[CLOSE]	= { 0x401008, { 0x0f, 0x1f, 0x80, 2, 0x46, 0x50, 0x49 }, 7 },
	[ID]	= { 0x40100f, { 0x0f, 0x1f, 0x80, 3, 0x46, 0x50, 0x49 }, 7 },
	[ROUND]	= { 0x401016, { 0x0f, 0x1f, 0x80, 4, 0x46, 0x50, 0x49 }, 7 },
	[COMMIT] = { 0x40101d, { 0x0f, 0x1f, 0x80, 5, 0x46, 0x50, 0x49 }, 7 },
	/* another magic: an ordinary NOP for the plugin */
	[FAKE]	= { 0x401024, { 0x0f, 0x1f, 0x80, 1, 0x46, 0x50, 0x48 }, 7 },
};

static void run(const char *what)
{
	for (; *what; what++) {
		struct qemu_plugin_insn *i = &block[*what - 'a'];

		if (i->cb)
			i->cb(0, i->udata);
		*i->counter += i->imm;
	}
}

int main(int argc, char **argv)
{
	struct qemu_plugin_tb tb = { N, block };
	int (*install)(qemu_plugin_id_t, const qemu_info_t *, int, char **);
	void *h;

	if (argc < 2) {
		fprintf(stderr, "usage: fake_qemu PLUGIN ARG...\n");
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 2;
	}
	*(void **)&install = dlsym(h, "qemu_plugin_install");
	if (!install || install(1, NULL, argc - 2, argv + 2))
		return 1;
	trans(1, &tb);
	/*
	 * a = A, b = B, c = NOSYM, d = USER, e = OPEN, f = CLOSE, g = ID,
	 * h = ROUND, i = COMMIT, j = FAKE.  Before any window: not counted.
	 */
	run("aaaaabd");
	/* window 2: 3 round trips, twice */
	run("eaaabbcddddj" "f" "gg" "hhh" "i");
	run("eab" "f" "gg" "hhh" "i");
	/* a warm-up (window 0): dropped */
	run("eaaaa" "f" "hhh" "i");
	/* window 1: one round trip */
	run("eb" "f" "g" "h" "i");
	/* markers out of order: a close without an open, a commit alone */
	run("fgi");
	atexit_cb(1, atexit_udata);
	return 0;
}
