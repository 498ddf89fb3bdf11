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
    final boolean freeRoomWhenWritten;

    private CallOptions(boolean callbackOnIoThread, boolean blockWhenFull) {
        this(callbackOnIoThread, blockWhenFull, false);
    }

    private CallOptions(boolean callbackOnIoThread, boolean blockWhenFull, boolean freeRoomWhenWritten) {
        this.callbackOnIoThread = callbackOnIoThread;
        this.blockWhenFull = blockWhenFull;
        this.freeRoomWhenWritten = freeRoomWhenWritten;
    }

    /**
     * These options, but the request gives its room in the pending limit back once it has been
     * written to the socket, and drops its body then, instead of holding both until it is answered.
     * For pushes whose answer may take as long as the other side likes (a watch notification is
     * acknowledged after the client's listeners ran): held until answered, a few hundred such
     * pushes to clients that are slow to answer fill the limit, and every other send of the node
     * fails with FlowControlException for as long as they stay unanswered. What is bounded then is
     * what the limit is for, the memory of requests not yet written; what waits for answers is for
     * the caller to bound (one push in flight per watcher, say).
     */
    public CallOptions freeingRoomWhenWritten() {
        return freeRoomWhenWritten ? this : new CallOptions(callbackOnIoThread, blockWhenFull, true);
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

    public boolean freeRoomWhenWritten() {
        return freeRoomWhenWritten;
    }
}
