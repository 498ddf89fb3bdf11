package io.poyang.raft.store;

import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code @ExtendWith(NoImpossibleStates.class)}: each test starts with the count of
 * {@link ImpossibleStates} reports at 0 and fails if any was made while it ran (a broken invariant
 * logged and gone on from would otherwise pass). Public for the tests of other packages and
 * modules (raft's test-jar).
 */
public final class NoImpossibleStates implements BeforeEachCallback, AfterEachCallback {

    @Override
    public void beforeEach(ExtensionContext context) {
        ImpossibleStates.reset();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        assertEquals(0, ImpossibleStates.count(), "impossible states were reported (see the log)");
    }
}
