package io.poyang.benchmark.chaos;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvException;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.client.KvClient;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.TimeoutException;

/**
 * One chaos client: a thread with its own {@link KvClient} (its own session and connections) doing one
 * operation at a time on the shared keys until the run ends: get, put, compare-and-set and remove,
 * every one recorded. Values are unique ({@code c<client>-<n>}) so a read names the write it saw. A
 * CAS expects the value this client last saw on the key (or absence), so some succeed and some fail
 * as others write in between.
 *
 * <p>How outcomes are recorded: an answer is {@code ok}, including a CAS that found another value
 * (false) and a remove that found nothing (not-found). A write that got no answer it can trust — a
 * timeout, a dropped connection, any other error — is {@code unknown}: KvClient resends a write after a
 * dropped connection, so even a NOT_LEADER at the end does not prove the first attempt was not
 * applied. A read that failed is {@code failed}: it changed nothing.
 */
final class ClientWorker implements Runnable {

    /** Slack over the client's own deadline before the worker stops waiting for an answer. */
    private static final long WAIT_SLACK_MILLIS = 5_000;

    private final int clientId;
    private final KvClient kv;
    private final long timeoutMillis;
    private final HistoryRecorder recorder;
    private final String[] keys;
    private final AtomicLong endNanos;
    private final Random random;
    private final Map<String, String> lastSeen = new HashMap<>();
    private final ChaosCounters counters;
    private long nextValue;

    ClientWorker(int clientId, KvClient kv, long timeoutMillis, HistoryRecorder recorder, String[] keys,
                 AtomicLong endNanos,
                 long seed, ChaosCounters counters) {
        this.clientId = clientId;
        this.kv = kv;
        this.timeoutMillis = timeoutMillis;
        this.recorder = recorder;
        this.keys = keys;
        this.endNanos = endNanos;
        this.random = new Random(seed);
        this.counters = counters;
    }

    @Override
    public void run() {
        while (System.nanoTime() - endNanos.get() < 0 && !Thread.currentThread().isInterrupted()) {
            String key = keys[random.nextInt(keys.length)];
            int dice = random.nextInt(100);
            Operation op;
            if (dice < 40) {
                op = get(key);
            } else if (dice < 65) {
                op = put(key, "c" + clientId + "-" + (++nextValue));
            } else if (dice < 90) {
                String expected = random.nextInt(5) == 0 ? null : lastSeen.get(key);
                op = cas(key, expected, "c" + clientId + "-" + (++nextValue));
            } else {
                op = remove(key);
            }
            recorder.record(op);
            counters.count(op);
        }
    }

    private Operation get(String key) {
        Invocation inv = recorder.invokeGet(clientId, key);
        try {
            KvNode n = await(kv.getAsync(key));
            String v = n.exists() && !n.isDir() ? new String(n.value(), StandardCharsets.UTF_8) : null;
            remember(key, v);
            return inv.getOk(recorder.nowNanos(), v);
        } catch (Throwable e) {
            return inv.failed(recorder.nowNanos(), describe(e));
        }
    }

    private Operation put(String key, String value) {
        Invocation inv = recorder.invokePut(clientId, key, value);
        try {
            await(kv.putAsync(key, value.getBytes(StandardCharsets.UTF_8)));
            remember(key, value);
            return inv.putOk(recorder.nowNanos());
        } catch (Throwable e) {
            return unknownWrite(inv, key, e);
        }
    }

    private Operation cas(String key, String expected, String value) {
        Invocation inv = recorder.invokeCas(clientId, key, expected, value);
        try {
            boolean swapped = await(kv.compareAndSetAsync(key, expected == null ? null
                    : expected.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8)));
            if (swapped) {
                remember(key, value);
            } else {
                lastSeen.remove(key);
            }
            return inv.casOk(recorder.nowNanos(), swapped);
        } catch (Throwable e) {
            return unknownWrite(inv, key, e);
        }
    }

    private Operation remove(String key) {
        Invocation inv = recorder.invokeRemove(clientId, key);
        try {
            await(kv.removeAsync(key));
            remember(key, null);
            return inv.removeOk(recorder.nowNanos(), true);
        } catch (Throwable e) {
            Throwable c = unwrap(e);
            if (c instanceof KvException && ((KvException) c).kvCode() == KvCode.NOT_FOUND) {
                remember(key, null);
                return inv.removeOk(recorder.nowNanos(), false);
            }
            return unknownWrite(inv, key, e);
        }
    }

    private Operation unknownWrite(Invocation inv, String key, Throwable e) {
        lastSeen.remove(key);
        Throwable c = unwrap(e);
        if (c instanceof KvException) {
            counters.unexpected(inv.kind().text() + " of " + key + ": " + c);
        }
        return inv.unknown(recorder.nowNanos(), describe(e));
    }

    private void remember(String key, String value) {
        if (value == null) {
            lastSeen.remove(key);
        } else {
            lastSeen.put(key, value);
        }
    }

    private <T> T await(CompletableFuture<T> f) throws Throwable {
        try {
            return f.get(timeoutMillis + WAIT_SLACK_MILLIS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause();
        } catch (TimeoutException e) {
            throw new TimeoutException("no answer within " + (timeoutMillis + WAIT_SLACK_MILLIS)
                    + " ms, past the client's own deadline of " + timeoutMillis + " ms");
        }
    }

    private static Throwable unwrap(Throwable e) {
        while ((e instanceof ExecutionException || e instanceof java.util.concurrent.CompletionException)
                && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    private static String describe(Throwable e) {
        Throwable c = unwrap(e);
        String m = c.getMessage();
        String s = c.getClass().getSimpleName() + (m == null ? "" : ": " + m);
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }

    /** Counts shared by the workers, for the progress lines and the summary. */
    static final class ChaosCounters {
        final AtomicLong ok = new AtomicLong();
        final AtomicLong unknown = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        final AtomicLong unexpected = new AtomicLong();
        private volatile String firstUnexpected;

        void count(Operation op) {
            switch (op.status()) {
                case OK:
                    ok.incrementAndGet();
                    break;
                case UNKNOWN:
                    unknown.incrementAndGet();
                    break;
                default:
                    failed.incrementAndGet();
                    break;
            }
        }

        void unexpected(String what) {
            if (unexpected.getAndIncrement() == 0) {
                firstUnexpected = what;
            }
        }

        long total() {
            return ok.get() + unknown.get() + failed.get();
        }

        String firstUnexpected() {
            return firstUnexpected;
        }
    }
}
