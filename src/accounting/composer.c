/*-------------------------------------------------------------------------
 *
 * composer.c
 *	  Compositions of privacy loss distributions in a child process that
 *	  runs only on an otherwise idle CPU.
 *
 * doc/budgets.md, "Charging".  A charge of a role with PLD accounting may
 * need a composition (budget.c): up to seconds of CPU for a long, varied
 * history.  It is that role's work, and must not delay another role's
 * statements.  Run in the statement's backend, even at a raised nice
 * value, it kept taking a share of the CPUs from the other roles'
 * processes on a busy machine: the scheduler gives a nice 10 process a
 * tenth of a nice 0 one's weight, and makes a waking process wait for it.
 * So the backend forks a child that computes the certificate at
 * SCHED_IDLE (Linux: a process that runs only where no other process is
 * runnable, and yields at once when one wakes).
 *
 * The child holds nothing another process could wait for: it was forked
 * from a backend that holds no lightweight lock and no spinlock, it
 * touches no shared memory, takes no lock, sends no message (to the client
 * or the log), handles no interrupt (HOLD_INTERRUPTS, every signal at its
 * default action), and leaves by _exit, so that none of the backend's exit
 * callbacks runs.  It writes the certificate, a plain struct, to a pipe
 * only the backend reads.  The backend waits for it interruptibly: a
 * cancel or a statement_timeout kills the child (SIGKILL) and fails the
 * statement as any cancelled statement fails; the backend's death kills it
 * too (PR_SET_PDEATHSIG).  What the backend holds while it waits (the
 * role's composition lock, budget.c, and the locks of the statement's
 * relations) only other statements of the same role wait for.
 *
 * The child computes exactly what the backend would (dp_pld_certify is a
 * function of its arguments alone, which the child has by fork).  So where
 * no child can run (fork or pipe fails, or dp_agg.composition_nice is 0)
 * or the child fails (an error in the composition, out of memory), the
 * backend composes itself, and reports the error as it always has.  The
 * certificate decides nothing by itself: the charger checks it against the
 * history it holds (charger.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/wait_event.h"

#include "compat.h"
#include "composer.h"
#include "guc.h"

/* the certificate of a composition run in this backend */
static void
certify_here(double epsilon, double delta, const DpPldState *history,
			 const DpPldState *stmt, DpPldCertificate *cert)
{
	/*
	 * Lower this backend's priority (never raise it) before its first
	 * composition: a process cannot raise its own priority again, so the
	 * backend keeps it until it exits.  Best effort.
	 */
	static bool lowered = false;

	if (!lowered && dp_guc_composition_nice > 0)
	{
		int			now;

		lowered = true;
		errno = 0;
		now = getpriority(PRIO_PROCESS, 0);
		if (errno == 0 && now < dp_guc_composition_nice)
			(void) setpriority(PRIO_PROCESS, 0, dp_guc_composition_nice);
	}
	dp_pld_certify(epsilon, delta, history, stmt, cert);
}

/* write all of buf to fd; false on a failure */
static bool
write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0)
	{
		ssize_t		n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= n;
	}
	return true;
}

/*
 * The child: compose, write the certificate to fd, _exit.  Exit status 0
 * when the whole certificate was written.
 */
static DP_NORETURN void
child_compose(int fd, pid_t parent, double epsilon, double delta,
			  const DpPldState *history, const DpPldState *stmt)
{
	static DpPldCertificate cert;
	volatile bool ok = false;
	int			signals[] = {SIGHUP, SIGINT, SIGTERM, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2,
	SIGPIPE};
	sigset_t	all;

	/* any signal ends the child; none runs a handler of the backend's */
	for (size_t i = 0; i < lengthof(signals); i++)
		signal(signals[i], SIG_DFL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
#ifdef __linux__
	(void) prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
	if (getppid() != parent)
		_exit(2);				/* the backend ended before prctl */
	HOLD_INTERRUPTS();

	/*
	 * Run only on an idle CPU.  Where SCHED_IDLE is refused, the lowest
	 * priority there is.
	 */
	{
#ifdef SCHED_IDLE
		struct sched_param sp = {0};

		if (sched_setscheduler(0, SCHED_IDLE, &sp) != 0)
#endif
			(void) setpriority(PRIO_PROCESS, 0, 19);
	}

	PG_TRY();
	{
		dp_pld_certify(epsilon, delta, history, stmt, &cert);
		ok = true;
	}
	PG_CATCH();
	{
		/* nothing is reported here: the backend composes again, and reports */
		ok = false;
	}
	PG_END_TRY();
	_exit(ok && write_all(fd, &cert, sizeof(cert)) ? 0 : 1);
}

/*
 * Fork the child and wait for its certificate; false where there is none
 * (no child could start, or it failed).  Interrupts are honoured while
 * waiting; an ERROR kills the child.
 */
static bool
certify_in_child(double epsilon, double delta, const DpPldState *history,
				 const DpPldState *stmt, DpPldCertificate *cert)
{
	int			fds[2];
	pid_t		parent = getpid();
	pid_t		pid;
	volatile size_t got = 0;
	volatile bool done = false;
	int			status = 0;

	/* a cancel already pending is honoured here, not carried into the child */
	CHECK_FOR_INTERRUPTS();
	if (pipe(fds) != 0)
		return false;
	if (fcntl(fds[0], F_SETFL, O_NONBLOCK) != 0)
	{
		close(fds[0]);
		close(fds[1]);
		return false;
	}
	pid = fork();
	if (pid < 0)
	{
		close(fds[0]);
		close(fds[1]);
		return false;
	}
	if (pid == 0)
	{
		close(fds[0]);
		child_compose(fds[1], parent, epsilon, delta, history, stmt);
	}
	close(fds[1]);

	PG_TRY();
	{
		char	   *buf = (char *) cert;

		while (got < sizeof(*cert))
		{
			ssize_t		n = read(fds[0], buf + got, sizeof(*cert) - got);

			if (n > 0)
			{
				got += n;
				continue;
			}
			if (n == 0)
				break;			/* the child ended without the whole answer */
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				break;
			(void) WaitLatchOrSocket(MyLatch,
									 WL_LATCH_SET | WL_SOCKET_READABLE | WL_EXIT_ON_PM_DEATH,
									 fds[0], -1L, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
		done = true;
	}
	PG_FINALLY();
	{
		close(fds[0]);
		if (!done || got < sizeof(*cert))
			(void) kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	PG_END_TRY();
	return got == sizeof(*cert) && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * dp_pld_certify's certificate for history + stmt at the limits (epsilon,
 * delta), composed in a child process at SCHED_IDLE where one can run,
 * else in this backend at dp_agg.composition_nice.
 */
void
dp_compose_certify(double epsilon, double delta, const DpPldState *history,
				   const DpPldState *stmt, DpPldCertificate *cert)
{
	if (dp_guc_composition_nice > 0 &&
		certify_in_child(epsilon, delta, history, stmt, cert))
		return;
	certify_here(epsilon, delta, history, stmt, cert);
}
