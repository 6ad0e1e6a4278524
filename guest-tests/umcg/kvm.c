// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/kvm: a worker that blocks inside KVM_RUN is parked only on its way
 * back to userspace, never between two guest entries (issue 9, item 7).
 * KVM handles pending "return to user" work (TIF_NOTIFY_RESUME) itself
 * before it enters the guest again; had UMCG parked there, the worker would
 * sleep inside KVM_RUN holding the vCPU mutex, and every other vCPU ioctl
 * would hang until a server ran it.
 *
 * The worker runs a tiny real-mode guest (../kvm/kvm_vm.h's VM) that reads
 * a page served by userfaultfd (so the vCPU thread blocks at a known point), then does OUT.
 * While the worker waits on the idle list, KVM_GET_REGS from another thread
 * must not block.  Needs /dev/kvm in the guest: SKIPs, saying why, only
 * when the kernel has no KVM for the CPU or the CPU has neither svm nor
 * vmx (../kvm/kvm_vm.h); otherwise a missing /dev/kvm fails.
 */
#include <fcntl.h>
#include <linux/kvm.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/ioctl.h>

#include "umcg_test.h"
#include "../kvm/kvm_vm.h"

#define DATA_GPA	0x1000
#define IO_PORT		0x10

static struct {
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w;
	int			vcpu;
	struct kvm_run		*run;
	int			run_ret;
	int			exit_reason;
	uint8_t			io_byte;
	int			regs_ret;	/* KVM_GET_REGS from another thread */
	int			regs_done;
} *c;

static void *worker(void *arg)
{
	(void)arg;
	if (umcg_worker_register(&c->w, &c->g, NULL))
		return (void *)1;
	c->run_ret = ioctl(c->vcpu, KVM_RUN, 0) ? errno : 0;
	c->exit_reason = c->run->exit_reason;
	if (c->exit_reason == KVM_EXIT_IO)
		c->io_byte = *((uint8_t *)c->run + c->run->io.data_offset);
	umcg_worker_unregister(&c->w, &c->g);
	return NULL;
}

static void *get_regs(void *arg)
{
	struct kvm_regs regs;

	(void)arg;
	c->regs_ret = ioctl(c->vcpu, KVM_GET_REGS, &regs) ? errno : 0;
	__atomic_store_n(&c->regs_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

TEST(worker_blocked_in_kvm_run)
{
	/* mov al, [DATA_GPA]; out IO_PORT, al; hlt */
	static const uint8_t code[] = { 0xa0, 0x00, 0x10, 0xe6, IO_PORT, 0xf4 };
	struct uffdio_api api = { .api = UFFD_API };
	const char *what = "";
	struct uffd_msg msg;
	struct pollfd pfd;
	struct umcg_worker *w;
	struct vm vm;
	uint8_t *src;
	int uffd, i, ret;
	pthread_t t, r;

	UMCG_REQUIRE();
	if (access("/dev/kvm", F_OK)) {
		int err = errno;	/* kvm_absent_reason() reads files */
		const char *why = kvm_absent_reason();

		/* a kernel with KVM for this CPU must have /dev/kvm */
		ASSERT_NE(NULL, why)
			TH_LOG("no /dev/kvm (%s), though this kernel has KVM for the CPU's svm/vmx",
			       strerror(err));
		SKIP(return, "%s", why);
	}
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		SKIP(return, "no userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));

	c = umcg_test_zalloc(sizeof(*c));
	ASSERT_NE(NULL, c);
	src = umcg_test_zalloc(4096);
	ASSERT_NE(NULL, src);
	/* the page at DATA_GPA is not touched yet: userfaultfd serves it */
	ret = vm_create(&vm, code, sizeof(code), &what);
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", what, strerror(-ret));
	c->vcpu = vm.vcpu;
	c->run = vm.run;
	{
		struct uffdio_register reg = {
			.range = { .start = (uintptr_t)vm.mem + DATA_GPA, .len = 4096 },
			.mode = UFFDIO_REGISTER_MODE_MISSING,
		};

		ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));
	}

	umcg_group_init(&c->g);
	ASSERT_EQ(0, umcg_server_register(&c->s, &c->g));
	ASSERT_EQ(0, pthread_create(&t, NULL, worker, NULL));
	for (i = 0; i < 20000 && !(w = umcg_take_idle(&c->g)); i++)
		usleep(1000);
	ASSERT_EQ(&c->w, w);

	/* Run it: KVM_RUN, the guest reads the missing page, it blocks. */
	ASSERT_EQ(0, umcg_run_worker(&c->s, w, umcg_deadline(20000000000ULL)));
	ASSERT_EQ(UMCG_TASK_BLOCKED, umcg_task_state(&w->task));
	EXPECT_TRUE(umcg_server_settle(&c->s));
	pfd = (struct pollfd){ .fd = uffd, .events = POLLIN };
	ASSERT_EQ(1, poll(&pfd, 1, 20000));
	ASSERT_EQ(sizeof(msg), read(uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);

	/* Serve the page: the guest goes on, OUT ends KVM_RUN. */
	src[0] = 0x5a;
	{
		struct uffdio_copy copy = {
			.dst = (uintptr_t)vm.mem + DATA_GPA, .src = (uintptr_t)src,
			.len = 4096,
		};

		ASSERT_EQ(0, ioctl(uffd, UFFDIO_COPY, &copy));
	}
	/* It queues itself once it woke: then it must be out of KVM_RUN. */
	for (i = 0; i < 20000 && !(w = umcg_take_idle(&c->g)); i++)
		usleep(1000);
	ASSERT_EQ(&c->w, w);
	ASSERT_EQ(0, pthread_create(&r, NULL, get_regs, NULL));
	for (i = 0; i < 3000 && !__atomic_load_n(&c->regs_done, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	ASSERT_EQ(1, c->regs_done)
		TH_LOG("KVM_GET_REGS hangs: the worker parked inside KVM_RUN, holding the vCPU");
	pthread_join(r, NULL);
	EXPECT_EQ(0, c->regs_ret);

	/* Run it again: KVM_RUN returns the OUT exit to the worker. */
	ASSERT_EQ(0, umcg_run_worker(&c->s, w, umcg_deadline(20000000000ULL)));
	while (umcg_still_running(&c->s, w))
		umcg_server_wait_current(&c->s, umcg_deadline(1000000000ULL));
	pthread_join(t, NULL);
	EXPECT_EQ(0, c->run_ret);
	EXPECT_EQ(KVM_EXIT_IO, c->exit_reason);
	EXPECT_EQ(0x5a, c->io_byte);
	EXPECT_EQ(UMCG_TASK_NONE, umcg_task_state(&w->task));
	EXPECT_EQ(0, umcg_unregister());
	vm_destroy(&vm);
}

TEST_HARNESS_MAIN
