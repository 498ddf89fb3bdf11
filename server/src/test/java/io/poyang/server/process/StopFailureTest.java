package io.poyang.server.process;

import io.poyang.server.ServerCommand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A graceful stop that fails with an Error (a full heap while stopping) ends the node process with
 * exit code 4, "stop failed", and says why on stderr: it used to exit 0, as if the stop had gone well,
 * because the stopping thread caught only RuntimeException. The Error comes from a log handler the
 * node process is configured with ({@link ErrorDuringStopLogHandler}), thrown from inside
 * {@code PoyangNode.stop()}.
 */
class StopFailureTest {

    @TempDir
    Path tmp;

    @Test
    void anErrorThrownDuringTheGracefulStopExitsFourNotZero() throws Exception {
        int[] p = io.poyang.net.LoopbackPorts.pick(3);
        TestConf.Ports ports = new TestConf.Ports(p[0], p[1], p[2]);
        Path conf = TestConf.write(TestConf.samples().resolve("single"), tmp.resolve("conf"), ports,
                tmp.resolve("data"), Collections.singletonMap(1, ports), Collections.emptyMap());
        Path logging = tmp.resolve("logging.properties");
        Files.write(logging, ("handlers = java.util.logging.ConsoleHandler, " + ErrorDuringStopLogHandler.class.getName()
                + "\n.level = INFO\n").getBytes(StandardCharsets.UTF_8));
        try (NodeProcess node = new NodeProcess(1, conf, tmp).start(
                Collections.singletonList("-Djava.util.logging.config.file=" + logging),
                new String[]{"--conf", conf.toString()})) {
            node.awaitReady(60_000);
            node.terminate();
            int code = node.waitForExit(60_000);
            String stderr = node.stderrTail();
            assertTrue(stderr.contains(ErrorDuringStopLogHandler.STOP_BEGINS), "the stop began: " + stderr);
            assertEquals(ServerCommand.EXIT_STOP_FAILED, code, "exit code of a stop that threw an Error; stderr:\n"
                    + stderr);
            assertTrue(stderr.contains("poyang server: the stop failed: java.lang.OutOfMemoryError: "
                    + ErrorDuringStopLogHandler.MESSAGE), stderr);
        }
    }
}
