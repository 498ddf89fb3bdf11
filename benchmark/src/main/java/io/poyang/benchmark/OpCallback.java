package io.poyang.benchmark;

/** Told once, from any thread, how an asynchronous operation ended. */
public interface OpCallback {

    void done(Outcome outcome);
}
