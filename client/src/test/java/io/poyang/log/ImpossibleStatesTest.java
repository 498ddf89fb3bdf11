package io.poyang.log;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ImpossibleStatesTest {

    @AfterEach
    void forgetReports() {
        ImpossibleStates.reset();
    }

    @Test
    void reportsAreCountedAndLoggedAtErrorWithAStackTrace() {
        Logger jul = Logger.getLogger(ImpossibleStates.class.getName());
        List<LogRecord> records = new ArrayList<>();
        Handler h = new Handler() {
            @Override
            public void publish(LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        jul.addHandler(h);
        boolean parents = jul.getUseParentHandlers();
        jul.setUseParentHandlers(false); // keep the build output clean
        try {
            ImpossibleStates.reset();
            assertEquals(0, ImpossibleStates.count());
            ImpossibleStates.report("term {} went backwards to {}", 5, 4);
            assertEquals(1, ImpossibleStates.count());
            RuntimeException cause = new RuntimeException("cause");
            ImpossibleStates.report("index {} lost", 9, cause);
            ImpossibleStates.report("no args");
            ImpossibleStates.report("null args", (Object[]) null);
            assertEquals(4, ImpossibleStates.count());

            assertEquals(4, records.size());
            assertEquals("IMPOSSIBLE STATE: term 5 went backwards to 4", records.get(0).getMessage());
            assertNotNull(records.get(0).getThrown(), "a stack trace shows where it happened");
            assertEquals("IMPOSSIBLE STATE: index 9 lost", records.get(1).getMessage());
            assertSame(cause, records.get(1).getThrown());
            assertTrue(records.get(2).getThrown() != null && records.get(3).getThrown() != null);
            ImpossibleStates.reset();
            assertEquals(0, ImpossibleStates.count());
        } finally {
            jul.removeHandler(h);
            jul.setUseParentHandlers(parents);
        }
    }
}
