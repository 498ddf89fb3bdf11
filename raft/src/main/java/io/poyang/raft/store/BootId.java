package io.poyang.raft.store;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The id the kernel gives the current boot of the machine. A failed fsync can leave pages the disk
 * never got in the page cache, marked clean, until the machine restarts; the store records the boot
 * such a failure happened on and compares it at the next start. The id must change with every boot
 * of the machine and with nothing else (not with a restart of the process), which is why it comes
 * from the kernel and not from anything of the JVM.
 */
final class BootId {

    /** Linux: a random UUID made at each boot. */
    static final Path LINUX_BOOT_ID = Paths.get("/proc/sys/kernel/random/boot_id");

    private BootId() {
    }

    /**
     * The current boot's id, or null when the system gives none (not Linux, or {@code /proc} not
     * mounted): the store then cannot tell a restart of the machine from one of the process.
     */
    static String current() {
        try {
            String id = new String(Files.readAllBytes(LINUX_BOOT_ID), StandardCharsets.US_ASCII).trim();
            return id.isEmpty() ? null : id;
        } catch (IOException | SecurityException e) {
            return null;
        }
    }
}
