// SPDX-License-Identifier: GPL-2.0
/*
 * kvm/isolation: what task isolation does for a vCPU thread.
 *
 * The quiesce hook runs on the way back to user space
 * (exit_to_user_mode_prepare()); KVM's run loop enters the guest again
 * after an exit it handles in the kernel without going there
 * (xfer_to_guest_mode_handle_work() has no task-isolation step). So a
 * quiescing vCPU thread is quiesced when KVM_RUN returns to user space, and
 * not between two guest entries: deferred work that the in-kernel exit
 * handling leaves behind waits for the next return to user space. This is
 * the documented limit (Documentation/userspace-api/task_isolation.rst).
 *
 * vcpu_quiesced_on_return_to_user_only: a quiescing task, pinned to a CPU,
 * runs a guest that executes CPUID 2000 times (each an exit KVM handles in
 * the kernel, counted with the kvm_exit trace event) and then OUT (the exit
 * to user space). The function tracer counts calls of the hook on that CPU:
 * at least one (KVM_RUN's return), and far fewer than the guest entries.
 * Should the VM-entry path quiesce one day, the second check fails and the
 * limit above must be rewritten with it.
 */
#include "../isolation/isol_common.h"
#include "kselftest_harness.h"

#include <sys/wait.h>

#include "kvm_vm.h"

#define HOOK		"__task_isol_exit_to_user_mode"
#define KVM_EXIT_EVENT	TRACEFS "/events/kvm/kvm_exit/enable"
#define CPUIDS		2000
#define IO_PORT		0x10

struct shared {
	volatile int stage;
	volatile int err;		/* the child's failed step, or 0 */
	volatile int run_errno;
	volatile int exit_reason;
	volatile int io_byte;
};

/* mov si, CPUIDS; l: cpuid; dec si; jnz l; mov al, 0x5a; out IO_PORT, al; hlt */
static const uint8_t code[] = {
	0xbe, CPUIDS & 0xff, CPUIDS >> 8,	/* 0: mov si, CPUIDS */
	0x0f, 0xa2,				/* 3: cpuid */
	0x4e,					/* 5: dec si */
	0x75, 0xfb,				/* 6: jnz 3 */
	0xb0, 0x5a,				/* 8: mov al, 0x5a */
	0xe6, IO_PORT,				/* a: out IO_PORT, al */
	0xf4,					/* c: hlt */
};

/* The vCPU thread: pinned to @cpu, quiescing, one KVM_RUN at stage 2. */
static void vcpu_child(struct shared *s, int cpu)
{
	const char *what = "";
	struct vm vm;

	if (pin_to_cpu(cpu)) {
		s->err = 1;
		_exit(1);
	}
	if (vm_create(&vm, code, sizeof(code), &what)) {
		s->err = 2;
		_exit(1);
	}
	if (isol_quiesce_on(ISOL_F_QUIESCE_VMSTATS)) {
		s->err = 3;
		_exit(1);
	}
	s->stage = 1;
	while (s->stage < 2)
		;
	s->run_errno = ioctl(vm.vcpu, KVM_RUN, 0) ? errno : 0;
	s->exit_reason = (int)vm.run->exit_reason;
	s->io_byte = vm.run->exit_reason == KVM_EXIT_IO ? vm_io_byte(&vm) : -1;
	s->stage = 3;
	_exit(0);
}

static void tracing_reset(void)
{
	write_file(TRACEFS "/tracing_on", "0");
	write_file(TRACEFS "/current_tracer", "nop");
	write_file(TRACEFS "/set_ftrace_filter", "");
	write_file(KVM_EXIT_EVENT, "0");
	trace_clear();
}

TEST(vcpu_quiesced_on_return_to_user_only)
{
	static const char * const step[] = {
		"", "pin to the CPU", "create the VM", "start quiescing",
	};
	const char *why = kvm_absent_reason();
	int cpu = online_cpus() - 1, status, hook, exits;
	struct shared *s;
	pid_t pid;

	if (!isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION is not set in this kernel");
	if (why && access("/dev/kvm", F_OK))
		SKIP(return, "%s", why);
	if (access(TRACEFS "/set_ftrace_filter", W_OK))
		SKIP(return, "no function tracer in this kernel (CONFIG_FUNCTION_TRACER): the debug variant has it");
	ASSERT_EQ(0, access(KVM_EXIT_EVENT, W_OK))
		TH_LOG("a kernel with KVM and tracing has the kvm_exit event");
	ASSERT_LT(0, cpu) TH_LOG("needs two CPUs");
	ASSERT_EQ(0, pin_to_cpu(0));

	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, s);
	memset((void *)s, 0, sizeof(*s));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		vcpu_child(s, cpu);
	while (s->stage < 1 && !s->err)
		usleep(1000);
	if (s->err) {
		waitpid(pid, &status, 0);
		ASSERT_EQ(0, s->err) TH_LOG("vCPU thread: %s failed", step[s->err]);
	}

	tracing_reset();
	write_file(TRACEFS "/buffer_size_kb", "1024");
	ASSERT_EQ(0, write_file(TRACEFS "/set_ftrace_filter", HOOK))
		TH_LOG(HOOK " is not a traceable function of this kernel");
	ASSERT_EQ(0, write_file(TRACEFS "/current_tracer", "function"))
		tracing_reset();
	ASSERT_EQ(0, write_file(KVM_EXIT_EVENT, "1"))
		tracing_reset();
	trace_clear();
	write_file(TRACEFS "/tracing_on", "1");
	s->stage = 2;
	while (s->stage < 3)
		usleep(1000);
	write_file(TRACEFS "/tracing_on", "0");
	waitpid(pid, &status, 0);
	hook = trace_count_lines(cpu, HOOK, NULL);
	exits = trace_count_lines(cpu, "kvm_exit", NULL);
	tracing_reset();

	ksft_print_msg("metric: guest_cpuid_loops=%d\n", CPUIDS);
	ksft_print_msg("metric: kvm_exits_on_vcpu_cpu=%d\n", exits);
	ksft_print_msg("metric: quiesce_hook_calls_on_vcpu_cpu=%d\n", hook);
	ASSERT_EQ(0, s->run_errno) TH_LOG("KVM_RUN: %s", strerror(s->run_errno));
	ASSERT_EQ(KVM_EXIT_IO, s->exit_reason);
	EXPECT_EQ(0x5a, s->io_byte);
	/* the guest's CPUIDs were exits KVM handled in the kernel */
	ASSERT_LE(CPUIDS, exits);
	/* KVM_RUN's return to user space quiesced (the positive control) */
	ASSERT_LE(1, hook);
	/* and no guest entry did: the documented limit */
	EXPECT_GT(CPUIDS / 10, hook)
		TH_LOG("the hook ran %d times for %d guest entries: the VM-entry path quiesces now; update the documented limit and this test",
		       hook, exits);
	munmap((void *)s, sizeof(*s));
}

TEST_HARNESS_MAIN
