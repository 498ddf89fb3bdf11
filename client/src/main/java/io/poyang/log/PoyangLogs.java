package io.poyang.log;

/**
 * Where loggers come from. The backend is chosen once, when this class is first used: slf4j when
 * {@code org.slf4j.LoggerFactory} is on the classpath, java.util.logging otherwise. The system
 * property {@code poyang.log=jdk|slf4j} forces a choice (slf4j is only honoured when present).
 */
public final class PoyangLogs {

    /** The backend in use: "slf4j" or "jdk". */
    public static final String BACKEND = chooseBackend();

    private PoyangLogs() {
    }

    private static String chooseBackend() {
        String forced = System.getProperty("poyang.log");
        boolean slf4jPresent;
        try {
            Class.forName("org.slf4j.LoggerFactory", false, PoyangLogs.class.getClassLoader());
            slf4jPresent = true;
        } catch (Throwable e) {
            slf4jPresent = false;
        }
        if ("jdk".equalsIgnoreCase(forced)) {
            return "jdk";
        }
        return slf4jPresent ? "slf4j" : "jdk";
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
