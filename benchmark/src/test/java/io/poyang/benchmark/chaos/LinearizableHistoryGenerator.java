package io.poyang.benchmark.chaos;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Makes large chaos-like histories that are linearizable by construction: clients doing put, get, CAS and
 * remove one after another on a few keys, each operation taking effect at a random instant inside its interval
 * (results computed by applying the operations in that order to real registers). A share of the writes ends
 * UNKNOWN, half of them taking effect (possibly after the client gave up) and half not; a few operations fail.
 */
final class LinearizableHistoryGenerator {

    private static final long MICROS = 1_000;

    private LinearizableHistoryGenerator() {
    }

    static List<Operation> generate(long seed, int clients, int keys, int operations, double unknownShare) {
        Random random = new Random(seed);
        List<Planned> planned = new ArrayList<>(operations);
        long[] clock = new long[clients];
        // per key, the value of the last put planned: a CAS expects it 4 times in 5 (as ClientWorker expects
        // the value it last saw), so CASes from a value, swapped or not, are part of the histories
        Map<String, String> lastPut = new HashMap<>();
        long id = 1;
        for (int n = 0; n < operations; n++) {
            int c = random.nextInt(clients);
            String key = "k" + random.nextInt(keys);
            long invoke = clock[c] + random.nextInt(50) * MICROS / 10;
            // Mostly sub-millisecond, sometimes slow (an election, a GC pause).
            long duration = random.nextInt(100) < 97 ? 50 * MICROS + random.nextInt(900) * MICROS
                    : 5_000 * MICROS + random.nextInt(50_000) * MICROS;
            long complete = invoke + duration;
            clock[c] = complete;
            String value = "c" + c + "-" + id;
            String seen = random.nextInt(5) == 0 ? null : lastPut.get(key);
            Invocation inv;
            int kind = random.nextInt(100);
            if (kind < 40) {
                inv = Invocation.put(id++, c, key, value, invoke);
                lastPut.put(key, value);
            } else if (kind < 75) {
                inv = Invocation.get(id++, c, key, invoke);
            } else if (kind < 92) {
                inv = Invocation.cas(id++, c, key, seen, value, invoke);
            } else {
                inv = Invocation.remove(id++, c, key, invoke);
            }
            Planned p = new Planned(inv, complete);
            double fate = random.nextDouble();
            if (fate < unknownShare) {
                p.unknown = true;
                p.takesEffect = random.nextBoolean();
                // A timed-out proposal may commit well after the client gave up.
                p.effectNanos = invoke + (long) (random.nextDouble() * (duration + 20_000 * MICROS));
            } else if (fate < unknownShare + 0.002) {
                p.failed = true;
                p.takesEffect = false;
            } else {
                p.takesEffect = true;
                p.effectNanos = invoke + (long) (random.nextDouble() * duration);
            }
            planned.add(p);
        }
        // Apply in effect order to real registers to learn every result.
        List<Planned> byEffect = new ArrayList<>();
        for (Planned p : planned) {
            if (p.takesEffect) {
                byEffect.add(p);
            }
        }
        byEffect.sort((x, y) -> Long.compare(x.effectNanos, y.effectNanos));
        Map<String, String> registers = new HashMap<>();
        for (Planned p : byEffect) {
            Invocation inv = p.inv;
            String current = registers.get(inv.key());
            switch (inv.kind()) {
                case PUT:
                    registers.put(inv.key(), inv.value());
                    break;
                case GET:
                    p.read = current;
                    break;
                case CAS:
                    p.swapped = current == null ? inv.expected() == null : current.equals(inv.expected());
                    if (p.swapped) {
                        registers.put(inv.key(), inv.value());
                    }
                    break;
                default:
                    p.swapped = current != null;
                    registers.remove(inv.key());
                    break;
            }
        }
        List<Operation> ops = new ArrayList<>(operations);
        for (Planned p : planned) {
            ops.add(p.complete());
        }
        return ops;
    }

    /** An operation whose fate is decided before its result is known. */
    private static final class Planned {
        final Invocation inv;
        final long completeNanos;
        boolean unknown;
        boolean failed;
        boolean takesEffect;
        long effectNanos;
        String read;
        boolean swapped;

        Planned(Invocation inv, long completeNanos) {
            this.inv = inv;
            this.completeNanos = completeNanos;
        }

        Operation complete() {
            if (unknown) {
                return inv.unknown(completeNanos, "timeout");
            }
            if (failed) {
                return inv.failed(completeNanos, "NOT_LEADER");
            }
            switch (inv.kind()) {
                case PUT:
                    return inv.putOk(completeNanos);
                case GET:
                    return inv.getOk(completeNanos, read);
                case CAS:
                    return inv.casOk(completeNanos, swapped);
                default:
                    return inv.removeOk(completeNanos, swapped);
            }
        }
    }
}
