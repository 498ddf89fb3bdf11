package io.poyang.log;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URL;
import java.util.Collections;
import java.util.Enumeration;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PoyangLogsTest {

    /** A loader that hides chosen classes and resources, to play the classpaths a user may have. */
    static final class FilteringLoader extends ClassLoader {
        private final boolean slf4jApi;
        private final boolean binding17;
        private final boolean serviceProvider2;

        FilteringLoader(boolean slf4jApi, boolean binding17, boolean serviceProvider2) {
            super(PoyangLogsTest.class.getClassLoader());
            this.slf4jApi = slf4jApi;
            this.binding17 = binding17;
            this.serviceProvider2 = serviceProvider2;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.equals("org.slf4j.LoggerFactory") && !slf4jApi) {
                throw new ClassNotFoundException(name);
            }
            return super.loadClass(name, resolve);
        }

        @Override
        public URL getResource(String name) {
            boolean present = name.equals("org/slf4j/impl/StaticLoggerBinder.class") ? binding17
                    : name.equals("META-INF/services/org.slf4j.spi.SLF4JServiceProvider") ? serviceProvider2
                    : super.getResource(name) != null;
            if (name.startsWith("org/slf4j/impl/") || name.startsWith("META-INF/services/org.slf4j")) {
                try {
                    return present ? new URL("file:/" + name) : null;
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            }
            return super.getResource(name);
        }

        @Override
        public Enumeration<URL> getResources(String name) throws IOException {
            return name.startsWith("META-INF/services/org.slf4j") || name.startsWith("org/slf4j/impl/")
                    ? Collections.<URL>emptyEnumeration()
                    : super.getResources(name);
        }
    }

    @Test
    void thisTestClasspathUsesJdkLoggingBecauseSlf4jHasNoBinding() {
        // slf4j-api is a provided dependency, so it is on the test classpath, but no binding is.
        assertEquals("jdk", PoyangLogs.BACKEND);
        assertTrue(PoyangLogs.get(PoyangLogsTest.class) instanceof JdkLog);
    }

    @Test
    void backendChoiceFollowsTheClasspathAndTheProperty() {
        assertEquals("jdk", PoyangLogs.chooseBackend(new FilteringLoader(false, false, false), null));
        assertEquals("jdk", PoyangLogs.chooseBackend(new FilteringLoader(true, false, false), null),
                "slf4j-api without a binding would drop every message");
        assertEquals("slf4j", PoyangLogs.chooseBackend(new FilteringLoader(true, true, false), null));
        assertEquals("slf4j", PoyangLogs.chooseBackend(new FilteringLoader(true, false, true), null));
        assertEquals("jdk", PoyangLogs.chooseBackend(new FilteringLoader(true, true, true), "jdk"));
        assertEquals("slf4j", PoyangLogs.chooseBackend(new FilteringLoader(true, false, false), "slf4j"));
        assertEquals("jdk", PoyangLogs.chooseBackend(new FilteringLoader(false, false, false), "slf4j"),
                "slf4j cannot be forced when it is absent");
    }

    @Test
    void jdkLogFormatsLazilyAndPointsAtTheCaller() {
        Logger jul = Logger.getLogger("poyang.test.jdklog");
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
        jul.setUseParentHandlers(false);
        Level old = jul.getLevel();
        try {
            jul.setLevel(Level.INFO);
            PoyangLog log = PoyangLogs.get("poyang.test.jdklog");
            assertEquals("poyang.test.jdklog", log.name());
            assertFalse(log.isDebugEnabled());
            assertTrue(log.isInfoEnabled() && log.isWarnEnabled() && log.isErrorEnabled());
            Object exploding = new Object() {
                @Override
                public String toString() {
                    throw new AssertionError("formatted although the level is off");
                }
            };
            log.debug("x {}", exploding);
            log.debug("x {} {}", exploding, exploding);
            log.debug("x {} {} {}", exploding, exploding, exploding);
            assertTrue(records.isEmpty());

            IllegalStateException e = new IllegalStateException("why");
            log.info("one {}", 1);
            log.warn("two {} {}", 1, 2);
            log.error("three {} {} {}", 1, 2, 3);
            log.error("failed {}", "op", e);
            assertEquals(4, records.size());
            assertEquals("one 1", records.get(0).getMessage());
            assertEquals(Level.INFO, records.get(0).getLevel());
            assertEquals("two 1 2", records.get(1).getMessage());
            assertEquals(Level.WARNING, records.get(1).getLevel());
            assertEquals("three 1 2 3", records.get(2).getMessage());
            assertEquals(Level.SEVERE, records.get(2).getLevel());
            assertEquals("failed op", records.get(3).getMessage());
            assertSame(e, records.get(3).getThrown());
            assertEquals(PoyangLogsTest.class.getName(), records.get(3).getSourceClassName());
            assertEquals("jdkLogFormatsLazilyAndPointsAtTheCaller", records.get(3).getSourceMethodName());
        } finally {
            jul.removeHandler(h);
            jul.setLevel(old);
        }
    }

    @Test
    void slf4jApiWithoutABindingIsTheNoOpLoggerWhichIsWhyItIsNotChosen() {
        PoyangLog log = new Slf4jLog("poyang.test.slf4j");
        assertEquals("poyang.test.slf4j", log.name());
        // The evidence: slf4j-api alone hands out its no-op logger, which would drop every message.
        assertEquals("NOP", org.slf4j.LoggerFactory.getLogger("poyang.test.slf4j").getName());
        assertFalse(log.isErrorEnabled());
    }
}
