// SPDX-License-Identifier: GPL-2.0
/*
 * kp_hello: the out-of-tree module of scripts/boot-packages. It is built
 * against an installed linux-headers package (make -C
 * /lib/modules/REL/build M=...), so that its loading in the guest proves
 * the package has what an out-of-tree build needs and that what it built
 * matches the installed kernel (vermagic, symbol versions, struct module
 * layout). Its init sets a read-only parameter the initrd hook reads back
 * from /sys/module/kp_hello/parameters/answer: a module that is only
 * listed, not initialized, shows 0.
 */
#include <linux/init.h>
#include <linux/module.h>
#include <linux/utsname.h>

static int answer;
module_param(answer, int, 0444);
MODULE_PARM_DESC(answer, "42 once the module's init has run");

static int __init kp_hello_init(void)
{
	answer = 6 * 7;
	pr_info("kp_hello: loaded into %s\n", init_utsname()->release);
	return 0;
}

static void __exit kp_hello_exit(void)
{
	pr_info("kp_hello: unloaded\n");
}

module_init(kp_hello_init);
module_exit(kp_hello_exit);
MODULE_DESCRIPTION("kernel-pipeline: an out-of-tree module built against linux-headers");
MODULE_LICENSE("GPL");
