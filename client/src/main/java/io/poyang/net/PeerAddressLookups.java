package io.poyang.net;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one thread that looks peers' host names up again (shared by every client in the process).
 * A lookup may block for seconds on a slow name server; run on an I/O thread it would stall every
 * connection of that thread. The thread ends after a few idle seconds and starts again with the
 * next lookup.
 */
final class PeerAddressLookups {

    private static final long IDLE_SECONDS = 10;

    private static final ThreadPoolExecutor EXECUTOR = new ThreadPoolExecutor(0, 1, IDLE_SECONDS, TimeUnit.SECONDS,
            new LinkedBlockingQueue<Runnable>(), r -> {
                Thread t = new Thread(r, "poyang-net-host-lookup");
                t.setDaemon(true);
                return t;
            });

    private PeerAddressLookups() {
    }

    static void submit(Runnable lookup) {
        EXECUTOR.execute(lookup);
    }
}
