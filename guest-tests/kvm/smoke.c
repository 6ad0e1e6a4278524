// SPDX-License-Identifier: GPL-2.0
/*
 * kvm/smoke: KVM runs in this guest. A VM with one vCPU in real mode runs
 * "mov al, 0x42; out 0x10, al; hlt": KVM_RUN must end with KVM_EXIT_IO for
 * port 0x10 carrying 0x42, and the next KVM_RUN with KVM_EXIT_HLT (no
 * in-kernel irqchip, so the halt comes to user space). Two exits, each
 * counted, with the guest's instruction pointer where the code says.
 *
 * Without CONFIG_KVM or a CPU model with SVM/VMX it SKIPs with the reason;
 * with both, a missing /dev/kvm is a failure.
 */
/* kselftest_harness.h does not build with -Wextra -Werror otherwise */
#pragma GCC diagnostic ignored "-Wunused-parameter"
/* ASSERT_EQ(KVM_EXIT_IO, exit_reason): int constants against __u32 */
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"

#include "kvm_vm.h"

#define IO_PORT	0x10

TEST(real_mode_out_then_hlt)
{
	static const uint8_t code[] = {
		0xb0, 0x42,		/* mov al, 0x42 */
		0xe6, IO_PORT,		/* out IO_PORT, al */
		0xf4,			/* hlt */
	};
	const char *why = kvm_absent_reason(), *what = "";
	struct kvm_regs regs;
	struct vm vm;
	int ret, exits = 0;

	if (why && access("/dev/kvm", F_OK))
		SKIP(return, "%s", why);
	ret = vm_create(&vm, code, sizeof(code), &what);
	ASSERT_EQ(0, ret)
		TH_LOG("%s: %s", what, strerror(-ret));

	ASSERT_EQ(0, ioctl(vm.vcpu, KVM_RUN, 0));
	exits++;
	ASSERT_EQ(KVM_EXIT_IO, vm.run->exit_reason)
		TH_LOG("exit reason %u", vm.run->exit_reason);
	EXPECT_EQ(KVM_EXIT_IO_OUT, vm.run->io.direction);
	EXPECT_EQ(IO_PORT, vm.run->io.port);
	EXPECT_EQ(1, vm.run->io.size);
	EXPECT_EQ(1, vm.run->io.count);
	EXPECT_EQ(0x42, vm_io_byte(&vm));

	ASSERT_EQ(0, ioctl(vm.vcpu, KVM_RUN, 0));
	exits++;
	EXPECT_EQ(KVM_EXIT_HLT, vm.run->exit_reason)
		TH_LOG("exit reason %u", vm.run->exit_reason);
	ASSERT_EQ(0, ioctl(vm.vcpu, KVM_GET_REGS, &regs));
	/* past the hlt, the last byte of the code */
	EXPECT_EQ(sizeof(code), regs.rip);
	ksft_print_msg("metric: kvm_exits_to_user=%d\n", exits);
	vm_destroy(&vm);
}

TEST_HARNESS_MAIN
