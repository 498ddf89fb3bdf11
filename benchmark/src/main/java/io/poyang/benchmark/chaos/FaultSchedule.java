package io.poyang.benchmark.chaos;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * The faults of a run, drawn from its seed: one {@link FaultStep} after another, never two at once,
 * each followed by a quiet gap so the cluster can recover and clients make progress. Every chosen
 * kind comes once first, in a random order, then kinds at random; the run is stretched, if it must
 * be, until that first round is done, so every run sees each kind (a slow machine restarting nodes
 * slowly makes a run longer, never one with a kind missing). What each step targets at run time (the leader or another node, which side of a split) is
 * decided with the step's own seed against the cluster as it is then.
 */
final class FaultSchedule {

    /** Quiet time before the first fault, so the clients start against a healthy cluster. */
    static final long FIRST_FAULT_AFTER_MILLIS = 2_000;

    private final List<FaultStep> steps;
    private final int firstRoundSize;

    private FaultSchedule(List<FaultStep> steps, int firstRoundSize) {
        this.steps = steps;
        this.firstRoundSize = firstRoundSize;
    }

    /**
     * @param faults                the kinds to inject (names of {@link ChaosOptions#FAULTS}); empty: none
     * @param durationMillis        how long the clients run; steps are drawn to fill it
     * @param electionTimeoutMillis the nodes' election timeout (a pause lasts longer than it)
     */
    static FaultSchedule draw(long seed, List<String> faults, long durationMillis, long electionTimeoutMillis) {
        Random r = new Random(seed);
        List<FaultStep> steps = new ArrayList<>();
        if (faults.isEmpty()) {
            return new FaultSchedule(steps, 0);
        }
        List<String> firstRound = new ArrayList<>(faults);
        Collections.shuffle(firstRound, r);
        long t = FIRST_FAULT_AFTER_MILLIS;
        int i = 0;
        while (t < durationMillis || i < firstRound.size()) {
            String kind = i < firstRound.size() ? firstRound.get(i) : faults.get(r.nextInt(faults.size()));
            FaultStep s = step(kind, r, electionTimeoutMillis);
            steps.add(s);
            t += s.holdMillis() + s.gapAfterMillis() + 500;   // 500: a nominal allowance for restarts and checks
            i++;
        }
        return new FaultSchedule(steps, firstRound.size());
    }

    private static FaultStep step(String kind, Random r, long electionTimeoutMillis) {
        long gap = 1_000 + r.nextInt(1_500);
        boolean leader = r.nextBoolean();
        long choiceSeed = r.nextLong();
        switch (kind) {
            case "kill":
                return new FaultStep(kind, 1_000 + r.nextInt(3_000), gap, leader, choiceSeed);
            case "pause":
                // Longer than the election timeout (up to twice it is a timeout drawn by a follower), so the
                // others elect a new leader while the paused node still thinks it leads.
                return new FaultStep(kind, 2 * electionTimeoutMillis + r.nextInt((int) (2 * electionTimeoutMillis)),
                        gap, leader, choiceSeed);
            case "partition":
                return new FaultStep(kind, 3_000 + r.nextInt(3_000), gap, leader, choiceSeed);
            case "transfer":
                return new FaultStep(kind, 0, gap, false, choiceSeed);
            case "membership":
                return new FaultStep(kind, 2_000 + r.nextInt(3_000), gap, leader, choiceSeed);
            case "restart-all":
                return new FaultStep(kind, 500 + r.nextInt(1_500), gap, false, choiceSeed);
            default:
                throw new IllegalArgumentException("unknown fault kind " + kind);
        }
    }

    /** How many steps make the first round (each chosen kind once); a run lasts until they are done. */
    int firstRoundSize() {
        return firstRoundSize;
    }

    List<FaultStep> steps() {
        return Collections.unmodifiableList(steps);
    }

    /** One fault: its kind, how long it lasts, the quiet gap after it, and how its target is chosen. */
    static final class FaultStep {
        private final String kind;
        private final long holdMillis;
        private final long gapAfterMillis;
        private final boolean preferLeader;
        private final long choiceSeed;

        FaultStep(String kind, long holdMillis, long gapAfterMillis, boolean preferLeader, long choiceSeed) {
            this.kind = kind;
            this.holdMillis = holdMillis;
            this.gapAfterMillis = gapAfterMillis;
            this.preferLeader = preferLeader;
            this.choiceSeed = choiceSeed;
        }

        String kind() {
            return kind;
        }

        /** How long the fault lasts: a killed node's downtime, a pause, a partition, a replaced member's absence. */
        long holdMillis() {
            return holdMillis;
        }

        long gapAfterMillis() {
            return gapAfterMillis;
        }

        /** Target the leader (kill, pause, partition: isolate it; membership: replace it) rather than another node. */
        boolean preferLeader() {
            return preferLeader;
        }

        /** Seeds the choices made at run time (which node, which split). */
        long choiceSeed() {
            return choiceSeed;
        }

        @Override
        public String toString() {
            return kind + " for " + holdMillis + " ms" + (preferLeader ? " (the leader)" : "") + ", then " + gapAfterMillis
                    + " ms quiet";
        }
    }
}
