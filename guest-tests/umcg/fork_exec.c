// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/fork_exec: a child of a UMCG task is not a UMCG task, and execve()
 * ends the registration of servers and workers (item 2).
 */
#include <stdlib.h>
#include <sys/wait.h>

#include "umcg_test.h"

/*
 * After execve() this program is re-run with UMCG_EXEC_CHILD set: check
 * that the new image is not registered, before the harness starts.
 */
__attribute__((constructor)) static void exec_child(void)
{
	const char *v = getenv("UMCG_EXEC_CHILD");

	if (!v)
		return;
	if (umcg_ctl(UMCG_CTL_UNREGISTER, NULL) == 0)
		_exit(10);	/* was still registered */
	if (errno != EINVAL)
		_exit(11);
	if (umcg_wait(0, 0) == 0 || errno != EINVAL)
		_exit(12);
	_exit(0);
}

static int exec_self(void)
{
	char *argv[] = { "fork_exec", NULL };
	char *envp[] = { "UMCG_EXEC_CHILD=1", NULL };

	execve("/proc/self/exe", argv, envp);
	return 20;
}

/* Userspace bits that tell the parent's and the child's writes apart. */
#define PARENT_BITS	(0x5aU << 24)
#define CHILD_BITS	(0xa5U << 24)

TEST(fork_child_not_registered)
{
	struct umcg_task *t;
	pid_t pid;
	int status;

	UMCG_REQUIRE();
	t = umcg_test_zalloc(4096);
	ASSERT_NE(NULL, t);
	t->state = UMCG_TASK_RUNNING | PARENT_BITS;
	ASSERT_EQ(0, umcg_ctl(UMCG_CTL_REGISTER, t));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		if (umcg_ctl(UMCG_CTL_UNREGISTER, NULL) == 0 || errno != EINVAL)
			_exit(1);
		/* its own copy of the parent's (pinned) page */
		if (t->state != (UMCG_TASK_RUNNING | PARENT_BITS))
			_exit(5);
		t->state = UMCG_TASK_IDLE | CHILD_BITS;
		if (umcg_wait(0, 0) == 0 || errno != EINVAL)
			_exit(2);
		/* the child may register on its own (its own copy of *t) */
		t->state = UMCG_TASK_RUNNING | CHILD_BITS;
		t->next_tid = 0;
		if (umcg_ctl(UMCG_CTL_REGISTER, t))
			_exit(3);
		if (umcg_ctl(UMCG_CTL_UNREGISTER, NULL))
			_exit(4);
		/* the child's last word differs from anything the parent has */
		t->state = UMCG_TASK_BLOCKED | CHILD_BITS;
		t->next_tid = 0x12345;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* the parent is still registered, its struct untouched by the child */
	EXPECT_EQ(UMCG_TASK_RUNNING | PARENT_BITS, umcg_task_state(t));
	EXPECT_EQ(0, t->next_tid);
	/* and the kernel still reads the parent's page: it is RUNNING */
	EXPECT_EQ(0, umcg_wait(0, 0));
	t->state = UMCG_TASK_IDLE | PARENT_BITS;
	EXPECT_EQ(-1, umcg_wait(0, umcg_deadline(1000000)));
	EXPECT_EQ(ETIMEDOUT, errno);
	t->state = UMCG_TASK_RUNNING | PARENT_BITS;
	EXPECT_EQ(0, umcg_ctl(UMCG_CTL_UNREGISTER, NULL));
}

TEST(execve_server)
{
	struct umcg_task *t;
	pid_t pid;
	int status;

	UMCG_REQUIRE();
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		t = umcg_test_zalloc(4096);
		if (!t)
			_exit(31);
		t->state = UMCG_TASK_RUNNING;
		if (umcg_ctl(UMCG_CTL_REGISTER, t))
			_exit(30);
		_exit(exec_self());
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

static struct {
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w;
} *c;

static void *exec_worker(void *arg)
{
	(void)arg;
	if (umcg_worker_register(&c->w, &c->g, NULL))
		_exit(40);
	/* RUNNING worker: execve() kills the server thread and unregisters */
	_exit(exec_self());
	return NULL;
}

TEST(execve_worker)
{
	pid_t pid;
	int status;

	UMCG_REQUIRE();
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct umcg_worker *w;
		pthread_t t;

		c = umcg_test_zalloc(sizeof(*c));
		if (!c)
			_exit(45);
		umcg_group_init(&c->g);
		if (umcg_server_register(&c->s, &c->g))
			_exit(41);
		if (pthread_create(&t, NULL, exec_worker, NULL))
			_exit(42);
		umcg_wait_idle_list(&c->g, 5000);
		w = umcg_take_idle(&c->g);
		if (!w)
			_exit(43);
		umcg_run_worker(&c->s, w, 0);
		/* killed by the worker's execve(); not reached normally */
		pause();
		_exit(44);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
