package io.poyang.dtkv.client;

/**
 * For cluster tests: a client that vanishes as a crashed process would. Its connections close and
 * its timers stop, but nothing is sent first: no UNLOCK of the locks it holds (a graceful
 * {@link KvClient#close} sends one), no session end. Its locks are freed only by their leases.
 */
public final class ClientCrash {

    private ClientCrash() {
    }

    public static void crash(KvClient kv) {
        kv.shared.timer.shutdownNow();
        kv.shared.raft.stop();
    }
}
