package io.poyang.common;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;

/**
 * The one-thread timer the clients and the replication transport keep for retries, back-offs and
 * delays: a daemon thread (it never keeps a JVM alive), and cancelled tasks leave its queue at once
 * (a client that cancels a timeout per request would otherwise fill it with dead entries).
 */
public final class DaemonTimer {

    private DaemonTimer() {
    }

    /** A new timer whose thread is called {@code threadName}; shut it down with {@code shutdownNow}. */
    public static ScheduledExecutorService create(String threadName) {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread th = new Thread(r, threadName);
            th.setDaemon(true);
            return th;
        });
        t.setRemoveOnCancelPolicy(true);
        return t;
    }
}
