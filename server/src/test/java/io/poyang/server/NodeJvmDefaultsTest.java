package io.poyang.server;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NodeJvmDefaultsTest {

    @Test
    void jdksWithTheHotCardCacheGetALargerOne() {
        assertEquals(List.of("-XX:G1ConcRSLogCacheSize=13"), NodeJvmDefaults.forJdk(11));
        assertEquals(List.of("-XX:G1ConcRSLogCacheSize=13"), NodeJvmDefaults.forJdk(17));
        assertEquals(List.of("-XX:G1ConcRSLogCacheSize=13"), NodeJvmDefaults.forJdk(19));
    }

    @Test
    void jdksWithoutTheHotCardCacheGetNoOptionTheyWouldRefuse() {
        assertEquals(List.of(), NodeJvmDefaults.forJdk(20));
        assertEquals(List.of(), NodeJvmDefaults.forJdk(21));
        assertEquals(List.of(), NodeJvmDefaults.forJdk(25));
    }

    @Test
    void aVersionBelowEightIsRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NodeJvmDefaults.forJdk(1));
        assertTrue(e.getMessage().contains("not a JDK version"), e.getMessage());
    }

    @Test
    void theJdkRunningTheTestsStartsWithItsDefaultsAndPrintsThem() throws Exception {
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.addAll(NodeJvmDefaults.forThisJdk());
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(NodeJvmDefaults.class.getName());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = readAll(p.getInputStream());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the JVM did not exit");
        assertEquals(0, p.exitValue(), "the JVM refused the defaults " + cmd + ": " + out);
        assertEquals(String.join(" ", NodeJvmDefaults.forThisJdk()), out.trim());
    }

    private static String readAll(InputStream in) throws Exception {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        in.transferTo(b);
        return b.toString(StandardCharsets.UTF_8);
    }
}
