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
 * one after the last guest exit that follows the system call's own exit
 * step (KVM_RUN's return to user space, not a fault's or an interrupt's),
 * and far fewer than the guest entries.
 * Should the VM-entry path quiesce one day, the second check fails and the
 * limit above must be rewritten with it.
 */
#include "../isolation/isol_common.h"
#include "kselftest_harness.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kvm_vm.h"

/* the quiescing step of a system call's exit only (not of an interrupt's) */
#define SYSCALL_HOOK	"__task_isol_syscall_exit"
#define KVM_EXIT_EVENT	TRACEFS "/events/kvm/kvm_exit/enable"
#define CPUIDS		2000
#define IO_PORT		0x10

struct shared {
	volatile int stage;
	volatile int err;		/* the child's failed step, or 0 */
	volatile int err_errno;
	volatile int run_errno;
	volatile int exit_reason;
	volatile int io_byte;
};

enum { STEP_NONE, STEP_PIN, STEP_VM, STEP_QUIESCE, STEP_PARENT_GONE };

static const char * const step_name[] = {
	"", "pin to the CPU", "create the VM", "start quiescing",
	"parent gone",
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

static void child_fail(struct shared *s, int step, int err)
{
	s->err_errno = err;
	s->err = step;
	_exit(1);
}

/* The vCPU thread: pinned to @cpu, quiescing, one KVM_RUN at stage 2. */
static void vcpu_child(struct shared *s, int cpu, pid_t parent)
{
	const char *what = "";
	struct vm vm;
	int ret;

	/* never outlive the test: a failed check in the parent returns */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		child_fail(s, STEP_PARENT_GONE, 0);
	ret = pin_to_cpu(cpu);
	if (ret)
		child_fail(s, STEP_PIN, -ret);
	ret = vm_create(&vm, code, sizeof(code), &what);
	if (ret)
		child_fail(s, STEP_VM, -ret);
	/*
	 * Touch every page of the kvm_run mapping now: a first fault after
	 * KVM_RUN would be another return to user space, a hook call of its
	 * own.
	 */
	for (long off = 0; off < vm.run_size; off += 4096)
		s->io_byte = ((volatile uint8_t *)vm.run)[off];
	ret = isol_quiesce_on(PR_ISOL_F_QUIESCE_VMSTATS);
	if (ret)
		child_fail(s, STEP_QUIESCE, -ret);
	s->stage = 1;
	while (s->stage < 2)
		;
	s->run_errno = ioctl(vm.vcpu, KVM_RUN, 0) ? errno : 0;
	s->exit_reason = (int)vm.run->exit_reason;
	s->io_byte = vm.run->exit_reason == KVM_EXIT_IO ? vm_io_byte(&vm) : -1;
	s->stage = 3;
	_exit(0);
}

/* Wait up to @ms for the child to reach @stage (or fail): true if it did */
static bool wait_stage(struct shared *s, int stage, int ms)
{
	for (; ms > 0 && s->stage < stage && !s->err; ms--)
		usleep(1000);
	return s->stage >= stage;
}

/*
 * Discard the trace and put the tracer back as the other tests expect it:
 * no tracer, no filter (set_ftrace_filter is emptied by O_TRUNC, not by
 * writing an empty string), no kvm_exit event.
 */
static void tracing_reset(void)
{
	write_file(KVM_EXIT_EVENT, "0");
	trace_function_off();
}

/*
 * In @cpu's trace: the hook's lines (@hook), the kvm_exit lines (@exits),
 * and whether KVM_RUN's own return quiesced (@returned): after the last
 * kvm_exit, the system call's exit step (SYSCALL_HOOK, which an interrupt
 * return does not take) directly followed by the hook. 0 or -errno.
 */
static int count_trace(int cpu, int *hook, int *exits, bool *returned)
{
	enum { NONE, EXIT, SYSCALL_EXIT, OTHER } last = NONE;
	bool syscall_after_exits = false;
	FILE *f = trace_cpu_open(cpu);
	char line[512];

	*hook = *exits = 0;
	*returned = false;
	if (!f)
		return -errno;
	while (trace_next_line(f, line, sizeof(line))) {
		if (strstr(line, SYSCALL_HOOK)) {
			syscall_after_exits = *exits > 0;
			last = SYSCALL_EXIT;
		} else if (strstr(line, ISOL_EXIT_HOOK)) {
			(*hook)++;
			if (last == SYSCALL_EXIT && syscall_after_exits)
				*returned = true;
			last = OTHER;
		} else if (strstr(line, "kvm_exit")) {
			(*exits)++;
			*returned = false;
			syscall_after_exits = false;
			last = EXIT;
		}
	}
	fclose(f);
	return 0;
}

/* End the child however far it got, and reap it. */
static void child_end(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

FIXTURE(kvm_isol) {
	int unused;
};

FIXTURE_SETUP(kvm_isol)
{
}

FIXTURE_TEARDOWN(kvm_isol)
{
}

/* 20 s for the child to get ready + 60 s for KVM_RUN: inside 120 s */
TEST_F_TIMEOUT(kvm_isol, vcpu_quiesced_on_return_to_user_only, 120)
{
	const char *why = kvm_absent_reason();
	int cpu = online_cpus() - 1, hook, exits, ret;
	bool returned, done;
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
	{
		pid_t parent = getpid();

		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0)
			vcpu_child(s, cpu, parent);
	}
	if (!wait_stage(s, 1, 20000)) {
		child_end(pid);
		ASSERT_EQ(0, s->err)
			TH_LOG("vCPU thread: %s failed: %s", step_name[s->err],
			       strerror(s->err_errno));
		ASSERT_TRUE(false) TH_LOG("vCPU thread not ready in 20 s");
	}

	tracing_reset();
	write_file(TRACEFS "/buffer_size_kb", "1024");
	/*
	 * One function per write: set_ftrace_filter takes one name per
	 * write() and reports the rest as not written.
	 */
	ret = write_file(TRACEFS "/set_ftrace_filter", ISOL_EXIT_HOOK);
	if (!ret)
		ret = trace_filter_add(SYSCALL_HOOK);
	if (!ret) {
		char filter[4096];

		/* both, or the positive control could never hold */
		ret = read_file(TRACEFS "/set_ftrace_filter", filter, sizeof(filter));
		if (ret >= 0)
			ret = strstr(filter, ISOL_EXIT_HOOK) && strstr(filter, SYSCALL_HOOK) ? 0 : -ENOENT;
	}
	if (!ret)
		ret = write_file(TRACEFS "/current_tracer", "function");
	if (!ret)
		ret = write_file(KVM_EXIT_EVENT, "1");
	if (ret) {
		tracing_reset();
		child_end(pid);
		ASSERT_EQ(0, ret) TH_LOG("tracing " ISOL_EXIT_HOOK ", " SYSCALL_HOOK " and kvm_exit: %s", strerror(-ret));
	}
	trace_clear();
	write_file(TRACEFS "/tracing_on", "1");
	s->stage = 2;
	done = wait_stage(s, 3, 60000);
	write_file(TRACEFS "/tracing_on", "0");
	ret = count_trace(cpu, &hook, &exits, &returned);
	tracing_reset();
	child_end(pid);
	ASSERT_TRUE(done) TH_LOG("KVM_RUN did not return in 60 s");
	ASSERT_EQ(0, ret) TH_LOG("reading the trace of CPU %d", cpu);

	ksft_print_msg("metric: guest_cpuid_loops=%d\n", CPUIDS);
	ksft_print_msg("metric: kvm_exits_on_vcpu_cpu=%d\n", exits);
	ksft_print_msg("metric: quiesce_hook_calls_on_vcpu_cpu=%d\n", hook);
	ASSERT_EQ(0, s->run_errno) TH_LOG("KVM_RUN: %s", strerror(s->run_errno));
	ASSERT_EQ(KVM_EXIT_IO, s->exit_reason);
	EXPECT_EQ(0x5a, s->io_byte);
	/* the guest's CPUIDs were exits KVM handled in the kernel */
	ASSERT_LE(CPUIDS, exits);
	/* KVM_RUN's return to user space quiesced (the positive control) */
	ASSERT_TRUE(returned)
		TH_LOG("after the last guest exit, no " SYSCALL_HOOK " followed by " ISOL_EXIT_HOOK ": KVM_RUN's return to user space did not quiesce");
	/* and no guest entry did: the documented limit */
	EXPECT_GT(CPUIDS / 10, hook)
		TH_LOG("the hook ran %d times for %d guest entries: the VM-entry path quiesces now; update the documented limit and this test",
		       hook, exits);
	munmap((void *)s, sizeof(*s));
}

TEST_HARNESS_MAIN
