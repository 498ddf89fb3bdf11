package io.poyang.net;

/**
 * How one call behaves: where its callback runs and what happens when the pending-request limit
 * is full. Immutable; the predefined instances cover the usual cases without allocation.
 */
public final class CallOptions {

    /** Callback on the callback executor; fail at once with FlowControlException when full. */
    public static final CallOptions DEFAULT = new CallOptions(false, false);
    /** Callback on the I/O thread (quick, non-blocking callbacks only); fail when full. */
    public static final CallOptions IO_THREAD_CALLBACK = new CallOptions(true, false);
    /** Callback on the callback executor; wait for room (up to the request's timeout) when full. */
    public static final CallOptions BLOCK_WHEN_FULL = new CallOptions(false, true);

    final boolean callbackOnIoThread;
    final boolean blockWhenFull;

    private CallOptions(boolean callbackOnIoThread, boolean blockWhenFull) {
        this.callbackOnIoThread = callbackOnIoThread;
        this.blockWhenFull = blockWhenFull;
    }

    public static CallOptions of(boolean callbackOnIoThread, boolean blockWhenFull) {
        if (callbackOnIoThread) {
            return blockWhenFull ? new CallOptions(true, true) : IO_THREAD_CALLBACK;
        }
        return blockWhenFull ? BLOCK_WHEN_FULL : DEFAULT;
    }

    public boolean callbackOnIoThread() {
        return callbackOnIoThread;
    }

    public boolean blockWhenFull() {
        return blockWhenFull;
    }
}
