package io.poyang.benchmark;

/**
 * A test scenario with one asynchronous client and nothing to set up or close: a test gives only
 * {@link #issue}, and overrides the rest when it matters.
 */
abstract class AsyncOneClientScenario implements Scenario {

    @Override
    public void setUp(BenchOptions options) {
    }

    @Override
    public int clients() {
        return 1;
    }

    @Override
    public void call(int thread) {
        throw new UnsupportedOperationException("asynchronous only");
    }

    @Override
    public void close() throws Exception {
    }
}
