/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the kvm suite (a header, not a test program): a VM with
 * one vCPU in real mode at address 0 running a few bytes of code, and why
 * /dev/kvm is missing when it is.
 */
#ifndef GUEST_TESTS_KVM_VM_H
#define GUEST_TESTS_KVM_VM_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/kvm.h>

#include "kconfig.h"

#define VM_MEM_SIZE	(64 * 1024)

struct vm {
	int		kvm;
	int		fd;
	int		vcpu;
	struct kvm_run	*run;
	long		run_size;
	uint8_t		*mem;
};

/* True when /proc/cpuinfo lists @flag (e.g. "svm", "vmx") for some CPU. */
static inline bool cpu_has_flag(const char *flag)
{
	char line[4096], *p;
	size_t n = strlen(flag);
	bool found = false;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		for (p = strstr(line, flag); p; p = strstr(p + 1, flag))
			if (p[-1] == ' ' && (p[n] == ' ' || p[n] == '\n'))
				found = true;
	}
	fclose(f);
	return found;
}

/* 1 when @opt is =y or =m, 0 when not, -1 when the config is unreadable */
static inline int kvm_kconfig(const char *opt)
{
	char val[16];
	int ret = kconfig_value(opt, val, sizeof(val));

	if (ret != 1)
		return ret;
	return !strcmp(val, "y") || !strcmp(val, "m");
}

/*
 * Why KVM cannot run in this guest, or NULL when it must: a kernel
 * without KVM for the CPU's vendor (KVM_AMD for svm, KVM_INTEL for vmx),
 * or a CPU model with neither, is a reason to skip. With both, or when
 * /proc/config.gz cannot be read, a missing /dev/kvm is a failure.
 */
static inline const char *kvm_absent_reason(void)
{
	bool svm = cpu_has_flag("svm"), vmx = cpu_has_flag("vmx");

	if (!svm && !vmx)
		return "the CPU QEMU emulates has neither svm nor vmx";
	if (kvm_kconfig("CONFIG_KVM") == 0)
		return "CONFIG_KVM is not set in this kernel";
	if (svm && kvm_kconfig("CONFIG_KVM_AMD") == 0)
		return "the CPU has svm, and CONFIG_KVM_AMD is not set in this kernel";
	if (vmx && kvm_kconfig("CONFIG_KVM_INTEL") == 0)
		return "the CPU has vmx, and CONFIG_KVM_INTEL is not set in this kernel";
	return NULL;
}

/*
 * A VM with one vCPU in real mode (CS:IP 0:0), @code at guest physical
 * address 0. Returns 0 or -errno, with @what naming the step that failed.
 */
static inline int vm_create(struct vm *vm, const void *code, size_t len,
			    const char **what)
{
	struct kvm_userspace_memory_region region;
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	memset(vm, 0, sizeof(*vm));
	vm->kvm = vm->fd = vm->vcpu = -1;
#define STEP(cond, name) do { if (!(cond)) { *what = name; return -errno; } } while (0)
	vm->kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	STEP(vm->kvm >= 0, "open /dev/kvm");
	STEP(ioctl(vm->kvm, KVM_GET_API_VERSION, 0) == KVM_API_VERSION, "KVM_GET_API_VERSION");
	vm->fd = ioctl(vm->kvm, KVM_CREATE_VM, 0);
	STEP(vm->fd >= 0, "KVM_CREATE_VM");
	vm->mem = mmap(NULL, VM_MEM_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	STEP(vm->mem != MAP_FAILED, "mmap guest memory");
	memcpy(vm->mem, code, len);
	region = (struct kvm_userspace_memory_region) {
		.slot = 0, .guest_phys_addr = 0, .memory_size = VM_MEM_SIZE,
		.userspace_addr = (uintptr_t)vm->mem,
	};
	STEP(!ioctl(vm->fd, KVM_SET_USER_MEMORY_REGION, &region), "KVM_SET_USER_MEMORY_REGION");
	vm->vcpu = ioctl(vm->fd, KVM_CREATE_VCPU, 0);
	STEP(vm->vcpu >= 0, "KVM_CREATE_VCPU");
	vm->run_size = ioctl(vm->kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	STEP(vm->run_size > 0, "KVM_GET_VCPU_MMAP_SIZE");
	vm->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       vm->vcpu, 0);
	STEP(vm->run != MAP_FAILED, "mmap kvm_run");
	STEP(!ioctl(vm->vcpu, KVM_GET_SREGS, &sregs), "KVM_GET_SREGS");
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	sregs.ds.base = 0;
	sregs.ds.selector = 0;
	STEP(!ioctl(vm->vcpu, KVM_SET_SREGS, &sregs), "KVM_SET_SREGS");
	memset(&regs, 0, sizeof(regs));
	regs.rip = 0;
	regs.rflags = 2;
	STEP(!ioctl(vm->vcpu, KVM_SET_REGS, &regs), "KVM_SET_REGS");
#undef STEP
	return 0;
}

static inline void vm_destroy(struct vm *vm)
{
	if (vm->run && vm->run != MAP_FAILED)
		munmap(vm->run, vm->run_size);
	if (vm->mem && vm->mem != MAP_FAILED)
		munmap(vm->mem, VM_MEM_SIZE);
	if (vm->vcpu >= 0)
		close(vm->vcpu);
	if (vm->fd >= 0)
		close(vm->fd);
	if (vm->kvm >= 0)
		close(vm->kvm);
}

/* The byte of a one-byte KVM_EXIT_IO OUT. */
static inline uint8_t vm_io_byte(const struct vm *vm)
{
	return *((const uint8_t *)vm->run + vm->run->io.data_offset);
}

#endif
