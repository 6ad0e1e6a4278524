// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/security: TIDs of another process in next_tid or behind
 * idle_server_tid_ptr are refused and the other process's memory is left
 * untouched (item 9).  The other process's server sleeps in one umcg_wait()
 * through all attempts: its whole struct umcg_task (state included) must be
 * unchanged, its wait must run into its timeout (an event would end it
 * early), and it must not even be woken for nothing - its count of
 * voluntary context switches may not move (issue 9: the previous version
 * compared only bytes the kernel never writes and could not see a bare
 * wakeup).
 */
#include <sys/wait.h>

#include "umcg_test.h"

struct shared {
	struct umcg_task	task;		/* the other process's server */
	pid_t			tid;
	int			sleeping;	/* about to call umcg_wait() */
	int			wait_ret;	/* its errno, 0 = woken */
	uint64_t		slept_ns;
};

#define FOREIGN_WAIT_NS	4000000000ULL

static void snapshot(struct shared *sh, unsigned char *buf)
{
	memcpy(buf, &sh->task, sizeof(sh->task));
}

static struct {
	struct umcg_group	g;
	struct umcg_worker	w;
	int			reg_ret;
} *c;

static void *bad_worker(void *arg)
{
	(void)arg;
	c->reg_ret = umcg_worker_register(&c->w, &c->g, NULL);
	return NULL;
}

TEST(foreign_tids)
{
	unsigned char before[64], after[64];
	struct shared *sh;
	struct umcg_task *me;
	long csw0, csw1;
	pthread_t t;
	pid_t pid;
	int status, i;

	UMCG_REQUIRE();
	sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		/* another process: a server sleeping IDLE in umcg_wait() */
		uint64_t t0;

		sh->task.state = UMCG_TASK_RUNNING;
		if (umcg_ctl(UMCG_CTL_REGISTER, &sh->task))
			_exit(1);
		__atomic_store_n(&sh->task.state, UMCG_TASK_IDLE,
				 __ATOMIC_SEQ_CST);
		__atomic_store_n(&sh->tid, umcg_gettid(), __ATOMIC_SEQ_CST);
		__atomic_store_n(&sh->sleeping, 1, __ATOMIC_SEQ_CST);
		t0 = umcg_now_ns(CLOCK_MONOTONIC);
		sh->wait_ret = umcg_wait(0, umcg_deadline(FOREIGN_WAIT_NS)) ?
			       errno : 0;
		sh->slept_ns = umcg_now_ns(CLOCK_MONOTONIC) - t0;
		_exit(0);
	}
	for (i = 0; i < 5000 && !__atomic_load_n(&sh->sleeping, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	ASSERT_EQ(1, sh->sleeping);
	/* asleep in umcg_wait(): from here on it must not be woken */
	for (i = 0; i < 5000; i++) {
		char st[64];

		if (umcg_task_status(pid, pid, "State", st, sizeof(st)) &&
		    st[0] == 'S')
			break;
		usleep(1000);
	}
	snapshot(sh, before);
	csw0 = umcg_task_nvcsw(pid, pid);
	ASSERT_LE(0, csw0);

	me = umcg_test_zalloc(4096);
	ASSERT_NE(NULL, me);
	me->state = UMCG_TASK_RUNNING;
	ASSERT_EQ(0, umcg_ctl(UMCG_CTL_REGISTER, me));

	/* next_tid of another process: WAKE_ONLY, and a switch */
	me->next_tid = sh->tid;
	EXPECT_EQ(-1, umcg_wait(UMCG_WAIT_WAKE_ONLY, 0));
	EXPECT_EQ(ESRCH, errno);
	EXPECT_EQ(-1, umcg_wait(UMCG_WAIT_WAKE_ONLY | UMCG_WAIT_WF_CURRENT_CPU,
				0));
	EXPECT_EQ(ESRCH, errno);
	me->state = UMCG_TASK_IDLE;
	EXPECT_EQ(-1, umcg_wait(0, umcg_deadline(100000000)));
	EXPECT_EQ(ESRCH, errno);	/* refused before sleeping */
	me->state = UMCG_TASK_RUNNING;
	me->next_tid = 0;

	/* idle_server_tid_ptr holding a TID of another process */
	c = umcg_test_zalloc(sizeof(*c));
	ASSERT_NE(NULL, c);
	umcg_group_init(&c->g);
	c->g.idle_server_tid = sh->tid;
	ASSERT_EQ(0, pthread_create(&t, NULL, bad_worker, NULL));
	pthread_join(t, NULL);
	EXPECT_EQ(-ESRCH, c->reg_ret);
	EXPECT_EQ(0, c->g.idle_workers);	/* not queued */
	EXPECT_EQ((uint32_t)sh->tid, c->g.idle_server_tid);

	usleep(50000);
	snapshot(sh, after);
	csw1 = umcg_task_nvcsw(pid, pid);
	/* all 64 bytes, the state word included */
	EXPECT_EQ(0, memcmp(before, after, sizeof(before)));
	EXPECT_EQ(UMCG_TASK_IDLE, umcg_task_state(&sh->task));
	EXPECT_EQ(csw0, csw1) TH_LOG("the other process's server was woken %ld times",
				     csw1 - csw0);

	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* its one wait ran into the timeout: no event, no early return */
	EXPECT_EQ(ETIMEDOUT, sh->wait_ret);
	EXPECT_GE(sh->slept_ns, FOREIGN_WAIT_NS - 2000000ULL);
	EXPECT_EQ(UMCG_TASK_IDLE, umcg_task_state(&sh->task));
	EXPECT_EQ(0, umcg_unregister());
}

TEST_HARNESS_MAIN
