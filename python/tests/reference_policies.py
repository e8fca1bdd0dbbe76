"""Python versions of built-in queue orders, for the module's tests and the CLI's
`--policy py:reference_policies.<Class>`."""
import orrery


class Fifo(orrery.Policy):
    """fifo: submit order, head-of-line blocking."""

    def priority(self, job, now):
        return job.submit


class Sjf(orrery.Policy):
    """sjf: shortest duration first, blocking. The oracle estimator's estimate is the true
    duration, which only the simulator knows (as for the built-in sjf)."""

    estimator = "oracle"

    def priority(self, job, now):
        return (job.estimate, job.submit)


class TwoQueueLas(orrery.Policy):
    """Two-queue least attained service on GPU-seconds (Lucid's Tiresias setting: one
    threshold at 18,000 GPU-s), FIFO within a queue. Orders the queue only: it preempts
    nothing."""

    threshold = 18000

    def priority(self, job, now):
        return (0 if job.attained < self.threshold else 1, job.submit)


class Raises(orrery.Policy):
    """Fails on the third job it orders."""

    def __init__(self):
        self.calls = 0

    def priority(self, job, now):
        self.calls += 1
        if self.calls == 3:
            return 1 / 0
        return job.submit


class NotANumber(orrery.Policy):
    def priority(self, job, now):
        return "soon"


class SubmitOnly(orrery.Policy):
    """The cheapest useful order (the benchmark's)."""

    def priority(self, job, now):
        return job.submit


class Keeper(orrery.Policy):
    """Keeps the job views it is handed (which are valid during their call only)."""

    def __init__(self):
        self.seen = []

    def priority(self, job, now):
        self.seen.append((job.id, job.user, job.vc, job.walltime, job.estimate, job.attained, job.attempts))
        self.kept = job
        return job.submit
