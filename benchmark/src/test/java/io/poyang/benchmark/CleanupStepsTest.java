package io.poyang.benchmark;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

class CleanupStepsTest {

    @Test
    void everyStepRunsAndTheFirstFailureIsThrownWithTheOthersSuppressed() {
        List<String> ran = new ArrayList<>();
        CleanupSteps steps = new CleanupSteps();
        IllegalStateException clientStop = new IllegalStateException("client stop failed");
        java.io.IOException deleteFailed = new java.io.IOException("delete failed");
        steps.run(() -> {
            ran.add("client");
            throw clientStop;
        });
        steps.run(() -> ran.add("servers"));
        steps.run(() -> {
            ran.add("directory");
            throw deleteFailed;
        });
        steps.run(() -> ran.add("processes"));
        assertEquals(Arrays.asList("client", "servers", "directory", "processes"), ran);
        Exception thrown = assertThrows(Exception.class, steps::finish);
        assertSame(clientStop, thrown);
        assertArrayEquals(new Throwable[]{deleteFailed}, thrown.getSuppressed());
    }

    @Test
    void stepsThatAllSucceedThrowNothing() throws Exception {
        List<String> ran = new ArrayList<>();
        CleanupSteps steps = new CleanupSteps();
        steps.run(() -> ran.add("a"));
        steps.run(() -> ran.add("b"));
        steps.finish();
        assertEquals(Arrays.asList("a", "b"), ran);
    }
}
