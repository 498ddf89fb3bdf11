package io.poyang.log;

/**
 * Where loggers come from. The backend is chosen once, when this class is first used: slf4j when
 * slf4j-api <em>and a binding for it</em> are on the classpath, java.util.logging otherwise. (slf4j-api
 * alone would send every message to its no-op logger, so it does not count.) The system property
 * {@code poyang.log=jdk} forces java.util.logging; {@code poyang.log=slf4j} is accepted but only
 * takes effect when slf4j-api is present.
 */
public final class PoyangLogs {

    /** The backend in use: "slf4j" or "jdk". */
    public static final String BACKEND = chooseBackend(PoyangLogs.class.getClassLoader(),
            System.getProperty("poyang.log"));

    private PoyangLogs() {
    }

    /** The backend for the classes {@code loader} sees, given the value of {@code poyang.log}. */
    static String chooseBackend(ClassLoader loader, String forced) {
        if ("jdk".equalsIgnoreCase(forced)) {
            return "jdk";
        }
        if (!hasClass(loader, "org.slf4j.LoggerFactory")) {
            return "jdk";
        }
        if ("slf4j".equalsIgnoreCase(forced)) {
            return "slf4j";
        }
        // Look for a binding the way slf4j does, by resource, without initialising slf4j: 1.7 binds
        // through org.slf4j.impl.StaticLoggerBinder, 2.x through a service provider file.
        boolean bound = hasResource(loader, "org/slf4j/impl/StaticLoggerBinder.class")
                || hasResource(loader, "META-INF/services/org.slf4j.spi.SLF4JServiceProvider");
        return bound ? "slf4j" : "jdk";
    }

    private static boolean hasClass(ClassLoader loader, String name) {
        try {
            Class.forName(name, false, loader);
            return true;
        } catch (Throwable e) {
            return false;
        }
    }

    private static boolean hasResource(ClassLoader loader, String name) {
        try {
            return (loader == null ? ClassLoader.getSystemResource(name) : loader.getResource(name)) != null;
        } catch (Throwable e) {
            return false;
        }
    }

    public static PoyangLog get(Class<?> owner) {
        return get(owner.getName());
    }

    public static PoyangLog get(String name) {
        if ("slf4j".equals(BACKEND)) {
            return new Slf4jLog(name);
        }
        return new JdkLog(name);
    }
}
