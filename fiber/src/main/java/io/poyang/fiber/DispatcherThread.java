package io.poyang.fiber;

/** The thread of a {@link Dispatcher}; lets static fiber calls find their dispatcher without a ThreadLocal. */
final class DispatcherThread extends Thread {
    final Dispatcher dispatcher;

    DispatcherThread(Dispatcher dispatcher, Runnable loop, String name) {
        super(loop, name);
        this.dispatcher = dispatcher;
    }
}
