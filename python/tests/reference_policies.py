"""Python versions of built-in policies, for the module's tests and the CLI's
`--policy py:reference_policies.<Class>`."""
import bisect
import math

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


class Las(orrery.Policy):
    """Tiresias' discretized least attained service (2D-LAS) as a cycle: queues split by
    attained GPU-seconds at `thresholds`, FIFO within a queue; each decision walks running and
    pending jobs together in (queue, submit, id) order and keeps or starts each job whose GPUs
    fit what is left of the virtual cluster, preempting the running jobs that do not; a job
    restarted after a preemption keeps its GPUs for `protect` x its restart overhead. The
    defaults are `tiresias:preset=lucid` (one threshold of 18,000 GPU-s, decisions every 60 s);
    ThreeQueueLas is the default `tiresias`."""

    thresholds = (18000,)
    interval = 60
    protect = 2
    restart_overhead = "lucid"
    blocking = False

    def queue(self, service):
        return bisect.bisect_right(self.thresholds, service)

    def priority(self, job, now):
        return (self.queue(job.attained), job.submit)

    def protection(self, job):
        if job.preemptions == 0 or self.protect <= 0:
            return 0
        return math.ceil(self.protect * (40 if job.gpus <= 8 else 60))

    def cycle(self, view):
        now, budget = view.now, view.total_gpus
        running = []
        for job in view.running:
            if now - job.started < self.protection(job):
                budget -= job.gpus  # protected: keeps its GPUs whatever its queue
            else:
                service = job.attained + (now - job.started) * job.gpus
                running.append(((self.queue(service), job.submit, job.id), job))
        running.sort(key=lambda e: e[0])
        preempt, start, r = [], [], 0
        for job in view.pending:
            key = (self.queue(job.attained), job.submit, job.id)
            while r < len(running) and running[r][0] < key:
                budget = self.keep(running[r][1], budget, preempt)
                r += 1
            if job.gpus <= budget:
                budget -= job.gpus
                start.append(job)
            if budget <= 0:
                break
        for _, job in running[r:]:
            budget = self.keep(job, budget, preempt)
        if not self.interval:
            self.wake_at_changes(view, start)
        return [orrery.Preempt(j) for j in preempt] + [orrery.Start(j) for j in start]

    @staticmethod
    def keep(job, budget, preempt):
        if job.gpus <= budget:
            return budget - job.gpus
        preempt.append(job)
        return budget

    def wake_at_changes(self, view, started):
        """Decisions at events only: ask for one where a job started now will change its order
        (cross a threshold, if it runs that long) or end its restart protection. Every run
        begins with a start of this cycle, so these cover every running job."""
        now = view.now
        for job in started:
            if job.gpus == 0:
                continue
            for t in self.thresholds:
                if t > job.attained:
                    view.wake(now + -(-(t - job.attained) // job.gpus))
            if self.protection(job):
                view.wake(now + self.protection(job))


class ThreeQueueLas(Las):
    """The default `tiresias`: thresholds 3,250 and 7,200 GPU-s, decisions at events."""

    thresholds = (3250, 7200)
    interval = 0


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


class SmallLas(Las):
    """Las with a threshold of 100 GPU-s, decisions at events and no restart protection: on
    one 4-GPU node a 4-GPU job crosses it after 25 s and gives way to a waiting smaller job."""

    thresholds = (100,)
    interval = 0
    protect = 0


class AtMostTwoGpus(orrery.Policy):
    """Admits jobs of up to two GPUs; refuses larger ones with a reason."""

    def admit(self, job, cluster):
        self.seen = (cluster.vc, cluster.vc_gpus, cluster.gpus)
        return True if job.gpus <= 2 else f"{job.gpus} GPUs: at most 2 here"


class LastNode(orrery.Policy):
    """Places each job on the highest-numbered node with room for it."""

    def place(self, job, free_nodes):
        fits = [n for n, free in free_nodes.items() if free >= job.gpus]
        return {max(fits): job.gpus} if fits else None


class BadCycle(orrery.Policy):
    """A cycle that returns what `mistake` says on its first call with a job pending."""

    blocking = False

    def __init__(self, mistake):
        self.mistake = mistake
        self.kept = None

    def cycle(self, view):
        m, pending, running = self.mistake, list(view.pending), list(view.running)
        if m == "raise":
            return [1 / 0]
        if m == "twice":
            return [orrery.Start(pending[0]), orrery.Start(pending[0])]
        if m == "no-fit":
            return [orrery.Start(j) for j in pending]
        if m == "preempt-pending":
            return [orrery.Preempt(pending[0])]
        if m == "start-running":
            return [orrery.Start(running[0])] if running else [orrery.Start(pending[0])]
        if m == "unknown":
            return [orrery.Start(99)]
        if m == "not-a-list":
            return "start everything"
        if m == "not-a-decision":
            return [("start", pending[0])]
        if m == "stale-view":
            if self.kept is None:
                self.kept = pending[0]
                return []
            return [orrery.Start(self.kept)]
        free, starts = view.free_gpus, []  # no mistake: whatever fits, in queue order
        for job in pending:
            if job.gpus <= free:
                free -= job.gpus
                starts.append(orrery.Start(job.id))
        return starts


class StartTwice(BadCycle):
    """The CLI's bad decision: starts the first pending job twice."""

    def __init__(self):
        super().__init__("twice")
