// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/errors: the preconditions of umcg_ctl() and umcg_wait() and their
 * error codes (issue item 1).
 */
#include "umcg_test.h"

static struct umcg_task srv_task;

TEST(ctl_bad_flags)
{
	UMCG_REQUIRE();
	memset(&srv_task, 0, sizeof(srv_task));
	srv_task.state = UMCG_TASK_RUNNING;

	EXPECT_EQ(-1, umcg_ctl(0, &srv_task));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, umcg_ctl(0x4, &srv_task));	/* unknown bit */
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER | 0x80000000U, &srv_task));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER | UMCG_CTL_UNREGISTER,
			       &srv_task));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_WORKER, &srv_task));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_UNREGISTER | UMCG_CTL_WORKER, NULL));
	EXPECT_EQ(EINVAL, errno);
}

TEST(ctl_bad_self)
{
	char *buf;

	UMCG_REQUIRE();
	buf = umcg_test_zalloc(8192);
	ASSERT_NE(NULL, buf);

	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER, NULL));
	EXPECT_EQ(EINVAL, errno);
	/* Unaligned: 8, 32 and 63 bytes off a 64-byte boundary. */
	((struct umcg_task *)(buf + 8))->state = UMCG_TASK_RUNNING;
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER, (void *)(buf + 8)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER, (void *)(buf + 32)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER, (void *)(buf + 63)));
	EXPECT_EQ(EINVAL, errno);
	/* Unmapped. */
	ASSERT_EQ(0, munmap(buf + 4096, 4096));
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER, (void *)(buf + 4096)));
	EXPECT_EQ(EFAULT, errno);
	/* Read-only. */
	ASSERT_EQ(0, mprotect(buf, 4096, PROT_READ));
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER, (void *)buf));
	EXPECT_EQ(EFAULT, errno);
	/* Kernel address. */
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER,
			       (void *)0xffffffff81000000UL));
	EXPECT_EQ(EFAULT, errno);
	munmap(buf, 4096);
}

TEST(ctl_bad_state)
{
	struct umcg_task *t;

	UMCG_REQUIRE();
	t = umcg_test_zalloc(4096);
	ASSERT_NE(NULL, t);

	t->state = UMCG_TASK_IDLE;		/* a server must be RUNNING */
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER, t));
	EXPECT_EQ(EINVAL, errno);
	t->state = UMCG_TASK_RUNNING | UMCG_TF_LOCKED;
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER, t));
	EXPECT_EQ(EINVAL, errno);
	t->state = UMCG_TASK_RUNNING | 0x10000;	/* reserved bit */
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER, t));
	EXPECT_EQ(EINVAL, errno);
	t->state = UMCG_TASK_RUNNING;
	t->next_tid = 1;			/* next_tid must be 0 */
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER, t));
	EXPECT_EQ(EINVAL, errno);
	t->next_tid = 0;
	t->state = UMCG_TASK_RUNNING;		/* a worker must be IDLE */
	t->idle_workers_ptr = (uint64_t)(uintptr_t)((char *)t + 1024);
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER | UMCG_CTL_WORKER, t));
	EXPECT_EQ(EINVAL, errno);
	t->state = UMCG_TASK_IDLE;		/* worker: list head required */
	t->idle_workers_ptr = 0;
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER | UMCG_CTL_WORKER, t));
	EXPECT_EQ(EINVAL, errno);
	/* worker: misaligned list head and idle-server word */
	t->idle_workers_ptr = (uint64_t)(uintptr_t)((char *)t + 1028);
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER | UMCG_CTL_WORKER, t));
	EXPECT_EQ(EINVAL, errno);
	t->idle_workers_ptr = (uint64_t)(uintptr_t)((char *)t + 1024);
	t->idle_server_tid_ptr = (uint64_t)(uintptr_t)((char *)t + 1034);
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER | UMCG_CTL_WORKER, t));
	EXPECT_EQ(EINVAL, errno);
	/* worker: unmapped idle-server word */
	t->idle_server_tid_ptr = 0x1000;
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER | UMCG_CTL_WORKER, t));
	EXPECT_EQ(EFAULT, errno);
	/* still not registered after all that */
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_UNREGISTER, NULL));
	EXPECT_EQ(EINVAL, errno);
}

TEST(ctl_double_register_and_unregister)
{
	struct umcg_task *t;

	UMCG_REQUIRE();
	t = umcg_test_zalloc(4096);
	ASSERT_NE(NULL, t);

	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_UNREGISTER, NULL));
	EXPECT_EQ(EINVAL, errno);
	t->state = UMCG_TASK_RUNNING;
	ASSERT_EQ(0, umcg_ctl(UMCG_CTL_REGISTER, t));
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER, t));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_UNREGISTER, t));	/* self != NULL */
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, umcg_ctl(UMCG_CTL_UNREGISTER, NULL));
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_UNREGISTER, NULL));
	EXPECT_EQ(EINVAL, errno);
	/* registering again after unregistering works */
	t->state = UMCG_TASK_RUNNING;
	EXPECT_EQ(0, umcg_ctl(UMCG_CTL_REGISTER, t));
	EXPECT_EQ(0, umcg_ctl(UMCG_CTL_UNREGISTER, NULL));
}

TEST(wait_errors)
{
	struct umcg_task *t;

	UMCG_REQUIRE();
	t = umcg_test_zalloc(4096);
	ASSERT_NE(NULL, t);

	/* not registered */
	EXPECT_EQ(-1, umcg_wait(0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, umcg_wait(UMCG_WAIT_WAKE_ONLY, 0));
	EXPECT_EQ(EINVAL, errno);

	t->state = UMCG_TASK_RUNNING;
	ASSERT_EQ(0, umcg_ctl(UMCG_CTL_REGISTER, t));

	/* unknown flags */
	EXPECT_EQ(-1, umcg_wait(0x4, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, umcg_wait(0x80000000U, 0));
	EXPECT_EQ(EINVAL, errno);
	/* WF_CURRENT_CPU needs WAKE_ONLY */
	EXPECT_EQ(-1, umcg_wait(UMCG_WAIT_WF_CURRENT_CPU, 0));
	EXPECT_EQ(EINVAL, errno);
	/* WAKE_ONLY without next_tid */
	EXPECT_EQ(-1, umcg_wait(UMCG_WAIT_WAKE_ONLY, 0));
	EXPECT_EQ(EINVAL, errno);
	/* WAKE_ONLY with a timeout */
	t->next_tid = umcg_gettid();
	EXPECT_EQ(-1, umcg_wait(UMCG_WAIT_WAKE_ONLY, umcg_deadline(1000)));
	EXPECT_EQ(EINVAL, errno);
	/* next_tid that is not a UMCG task */
	t->next_tid = getppid();
	EXPECT_EQ(-1, umcg_wait(UMCG_WAIT_WAKE_ONLY, 0));
	EXPECT_EQ(ESRCH, errno);
	t->next_tid = 0x7fffffff;
	EXPECT_EQ(-1, umcg_wait(UMCG_WAIT_WAKE_ONLY, 0));
	EXPECT_EQ(ESRCH, errno);
	t->next_tid = 0xffffffffU;
	EXPECT_EQ(-1, umcg_wait(UMCG_WAIT_WAKE_ONLY | UMCG_WAIT_WF_CURRENT_CPU,
				0));
	EXPECT_EQ(ESRCH, errno);
	/* waking itself is allowed and harmless */
	t->next_tid = umcg_gettid();
	EXPECT_EQ(0, umcg_wait(UMCG_WAIT_WAKE_ONLY, 0));
	t->next_tid = 0;
	/* a RUNNING task's wait returns at once */
	EXPECT_EQ(0, umcg_wait(0, 0));
	/* state must be IDLE or RUNNING */
	t->state = UMCG_TASK_BLOCKED;
	EXPECT_EQ(-1, umcg_wait(0, 0));
	EXPECT_EQ(EINVAL, errno);
	t->state = UMCG_TASK_NONE;
	EXPECT_EQ(-1, umcg_wait(0, 0));
	EXPECT_EQ(EINVAL, errno);
	t->state = UMCG_TASK_RUNNING;
	EXPECT_EQ(0, umcg_ctl(UMCG_CTL_UNREGISTER, NULL));
}

/*
 * A worker registration that fails must not leave the worker on its idle
 * list: userspace frees or reuses the struct of a failed registration, and
 * the next server that takes the list would follow a dangling pointer
 * (review finding 5).  Here the idle-server word is readable but not
 * writable, with a server's TID in it, so the wake after the push faults.
 */
static struct {
	struct umcg_task	w;
	uint64_t		head;
	uint32_t		*ro_word;
	int			ret;
} *rf;

static void *ro_word_worker(void *arg)
{
	(void)arg;
	rf->w.state = UMCG_TASK_IDLE;
	rf->w.idle_workers_ptr = (uint64_t)(uintptr_t)&rf->head;
	rf->w.idle_server_tid_ptr = (uint64_t)(uintptr_t)rf->ro_word;
	rf->ret = umcg_ctl(UMCG_CTL_REGISTER | UMCG_CTL_WORKER, &rf->w) ?
		  errno : 0;
	return NULL;
}

TEST(failed_worker_registration_not_queued)
{
	struct umcg_task *srv;
	pthread_t t;

	UMCG_REQUIRE();
	rf = umcg_test_zalloc(sizeof(*rf));
	srv = umcg_test_zalloc(4096);
	rf->ro_word = umcg_test_zalloc(4096);
	ASSERT_NE(NULL, rf);
	ASSERT_NE(NULL, srv);
	ASSERT_NE(NULL, rf->ro_word);
	srv->state = UMCG_TASK_RUNNING;
	ASSERT_EQ(0, umcg_ctl(UMCG_CTL_REGISTER, srv));
	*rf->ro_word = umcg_gettid();
	ASSERT_EQ(0, mprotect(rf->ro_word, 4096, PROT_READ));
	rf->ret = 99;
	ASSERT_EQ(0, pthread_create(&t, NULL, ro_word_worker, NULL));
	pthread_join(t, NULL);
	EXPECT_EQ(EFAULT, rf->ret);
	EXPECT_EQ(0, rf->head)
		TH_LOG("registration failed (%s) but the worker is on the list",
		       strerror(rf->ret));
	EXPECT_EQ(0, umcg_ctl(UMCG_CTL_UNREGISTER, NULL));
}

TEST_HARNESS_MAIN
