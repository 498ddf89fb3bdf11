package io.poyang.benchmark.chaos;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Injects the faults of a {@link FaultSchedule} into a {@link ChaosCluster}, one at a time, on its own
 * thread, until the run's time is up; each fault is undone before the next (the runner heals what a
 * failure left broken). Each fault is noted in
 * the history file (with the history's clock) and printed. Kills of the leader are remembered so the
 * report can say how long the cluster took to acknowledge a write again.
 */
final class FaultRunner implements Runnable {

    private final ChaosCluster cluster;
    private final FaultSchedule schedule;
    private final HistoryRecorder recorder;
    private final PrintStream out;
    /** When the clients stop (System.nanoTime()); moved later when the first round of faults needs it. */
    private final AtomicLong endNanos;
    private final int group;
    private final Map<String, Integer> injected = new LinkedHashMap<>();
    private final List<Long> leaderKillNanos = Collections.synchronizedList(new ArrayList<>());
    private final List<Long> restartAllNanos = Collections.synchronizedList(new ArrayList<>());
    private volatile String current = "none yet";
    private volatile Throwable failure;
    private volatile boolean stopRequested;

    FaultRunner(ChaosCluster cluster, FaultSchedule schedule, HistoryRecorder recorder, PrintStream out,
                AtomicLong endNanos,
                int group, List<String> kinds) {
        this.cluster = cluster;
        this.schedule = schedule;
        this.recorder = recorder;
        this.out = out;
        this.endNanos = endNanos;
        this.group = group;
        for (String k : kinds) {
            injected.put(k, 0);
        }
    }

    /** How long the clients run at least after a fault ended (its node restarted, its partition healed). */
    static final long RECOVERY_WINDOW_MILLIS = 10_000;

    @Override
    public void run() {
        try {
            if (!sleepUntil(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FaultSchedule.FIRST_FAULT_AFTER_MILLIS))) {
                return;
            }
            int done = 0;
            FaultClock clock = new FaultClock(endNanos);
            for (FaultSchedule.FaultStep step : schedule.steps()) {
                long need = TimeUnit.MILLISECONDS.toNanos(step.holdMillis() + 1_000);
                if (done < schedule.firstRoundSize()) {
                    // Every kind once, even if the run must be longer: the clients keep going through it.
                    long moved = clock.stretchForFirstRound(System.nanoTime(), need,
                            TimeUnit.MILLISECONDS.toNanos(step.gapAfterMillis()));
                    if (moved > 0) {
                        event(String.format(Locale.ROOT, "the run is stretched by %.1f s so the first "
                                + "round of faults (each kind once) completes", moved / 1e9));
                    }
                }
                if (stopRequested || !clock.faultFits(System.nanoTime(), need)) {
                    break;
                }
                done++;
                inject(step);
                // The clients go on long enough after the fault ended to see the cluster serve again:
                // a fault ending at the run's end would otherwise read as "no write acknowledged after it".
                long moved = clock.stretchForRecovery(System.nanoTime(),
                        TimeUnit.MILLISECONDS.toNanos(RECOVERY_WINDOW_MILLIS));
                if (moved > 0) {
                    event(String.format(Locale.ROOT, "the run is stretched by %.1f s so the clients see the "
                            + "cluster recover from this fault", moved / 1e9));
                }
                current = "none (quiet)";
                if (!sleepUntil(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(step.gapAfterMillis()))) {
                    break;
                }
            }
            current = "none (schedule done)";
        } catch (Throwable t) {
            failure = t;
            event("the fault runner failed: " + t);
        }
    }

    /** Asks the thread to stop starting faults (the one under way still ends normally). */
    void requestStop() {
        stopRequested = true;
    }

    private void inject(FaultSchedule.FaultStep step) throws Exception {
        Random choice = new Random(step.choiceSeed());
        List<Integer> ids = cluster.ids();
        int leader = cluster.leader(group);
        int target = step.preferLeader() && leader != 0 ? leader : ids.get(choice.nextInt(ids.size()));
        String role = target == leader ? " (the leader)" : leader == 0 ? " (no leader known)" : " (a follower)";
        switch (step.kind()) {
            case "kill": {
                ChaosNode n = cluster.node(target);
                n.kill9();
                long at = recorder.nowNanos();   // once it is gone: spawning `kill` takes a while
                if (target == leader) {
                    leaderKillNanos.add(at);
                }
                count("kill", "kill -9 node " + target + role + "; restart in " + step.holdMillis() + " ms");
                sleepFor(step.holdMillis());
                cluster.restart(target);
                event("node " + target + " restarted (pid " + n.pid() + ")");
                break;
            }
            case "pause": {
                ChaosNode n = cluster.node(target);
                n.pause();
                count("pause", "SIGSTOP node " + target + role + " for " + step.holdMillis() + " ms");
                sleepFor(step.holdMillis());
                n.resume();
                event("SIGCONT node " + target);
                break;
            }
            case "partition": {
                List<Integer> sideA = new ArrayList<>();
                List<Integer> sideB = new ArrayList<>();
                boolean split = ids.size() >= 5 && choice.nextBoolean();
                if (split) {
                    // Two against three; the leader on either side.
                    List<Integer> shuffled = new ArrayList<>(ids);
                    Collections.shuffle(shuffled, choice);
                    sideA.addAll(shuffled.subList(0, 2));
                    sideB.addAll(shuffled.subList(2, shuffled.size()));
                } else {
                    sideA.add(target);
                    for (int id : ids) {
                        if (id != target) {
                            sideB.add(id);
                        }
                    }
                }
                for (int a : sideA) {
                    cluster.block(a, toArray(sideB));
                }
                for (int b : sideB) {
                    cluster.block(b, toArray(sideA));
                }
                count("partition", (split ? "split the cluster " + sideA + " | " + sideB
                        : "isolate node " + target + role) + " for " + step.holdMillis() + " ms (leader was " + leader
                        + ")");
                sleepFor(step.holdMillis());
                cluster.healPartitions();
                event("partition healed");
                break;
            }
            case "restart-all": {
                for (int id : ids) {
                    cluster.node(id).kill9();
                }
                restartAllNanos.add(recorder.nowNanos());
                count("restart-all", "kill -9 every node; restart in " + step.holdMillis() + " ms");
                sleepFor(step.holdMillis());
                for (int id : ids) {
                    cluster.node(id).start();
                }
                for (int id : ids) {
                    cluster.node(id).awaitReady(ChaosCluster.READY_TIMEOUT_MILLIS);
                }
                event("every node restarted");
                break;
            }
            case "transfer": {
                List<Integer> others = new ArrayList<>(ids);
                others.remove(Integer.valueOf(leader));
                int to = others.get(choice.nextInt(others.size()));
                count("transfer", "leader transfer from node " + leader + " to node " + to);
                long t0 = System.nanoTime();
                cluster.transferLeader(group, to);
                event(String.format(Locale.ROOT, "node %d leads (transfer took %.0f ms)", to,
                        (System.nanoTime() - t0) / 1e6));
                break;
            }
            case "membership": {
                int spare = cluster.spareId();
                count("membership", "replace node " + target + role + " by node " + spare + ", and back after "
                        + step.holdMillis() + " ms");
                long t0 = System.nanoTime();
                cluster.replaceWithSpare(group, target);
                event(String.format(Locale.ROOT, "members now without node %d, with node %d (%.0f ms)", target,
                        spare, (System.nanoTime() - t0) / 1e6));
                sleepFor(step.holdMillis());
                t0 = System.nanoTime();
                cluster.restoreMembers(group);
                event(String.format(Locale.ROOT, "members back to %s; node %d dropped the group (%.0f ms)", ids,
                        spare, (System.nanoTime() - t0) / 1e6));
                break;
            }
            default:
                throw new IllegalStateException("unknown fault kind " + step.kind());
        }
    }

    private static int[] toArray(List<Integer> ids) {
        int[] r = new int[ids.size()];
        for (int i = 0; i < r.length; i++) {
            r[i] = ids.get(i);
        }
        return r;
    }

    private void count(String kind, String what) {
        injected.merge(kind, 1, Integer::sum);
        current = what;
        event("fault " + kind + ": " + what);
    }

    private void event(String text) {
        long t = recorder.nowNanos();
        String line = String.format(Locale.ROOT, "t=%.3fs %s", t / 1e9, text);
        recorder.note(line);
        synchronized (out) {
            out.println("  " + line);
        }
    }

    /** Sleeps for a fault's duration; a stop request does not cut a fault short (the node must come back). */
    private static void sleepFor(long millis) throws InterruptedException {
        Thread.sleep(millis);
    }

    /** Sleeps until {@code nanos} or the end of the run; false when the run is over. */
    private boolean sleepUntil(long nanos) throws InterruptedException {
        while (!stopRequested) {
            long end = endNanos.get();
            long until = nanos - end < 0 ? nanos : end;
            long left = until - System.nanoTime();
            if (left <= 0) {
                return until != end;
            }
            Thread.sleep(Math.min(100, TimeUnit.NANOSECONDS.toMillis(left) + 1));
        }
        return false;
    }

    /** The fault under way, for the progress line. */
    String current() {
        return current;
    }

    Map<String, Integer> injected() {
        return new LinkedHashMap<>(injected);
    }

    /** When each kill -9 of the leader (alone) took effect, on the history clock. */
    List<Long> leaderKillNanos() {
        return new ArrayList<>(leaderKillNanos);
    }

    /** When each restart-all's kills took effect, on the history clock. */
    List<Long> restartAllNanos() {
        return new ArrayList<>(restartAllNanos);
    }

    Throwable failure() {
        return failure;
    }
}
