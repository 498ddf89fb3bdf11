package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A crash at each step of a status save leaves the old or the new content, never neither. The
 * crash is the fault seam throwing before the step, after which the file is read back fresh.
 */
@ExtendWith(NoImpossibleStates.class)
class StatusFileTest {

    @TempDir
    Path dir;

    private static Map<String, String> content(String term) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("term", term);
        m.put("votedFor", "3");
        m.put("commitIndex", "42");
        return m;
    }

    private StatusFile file(FileIo io) {
        return new StatusFile(dir, io, Runnable::run, null, () -> {
            throw new AssertionError("not used");
        });
    }

    private enum Step { WRITE_TEMP, FSYNC_TEMP, RENAME, FSYNC_DIR }

    private void crashAt(Step step, String expectTerm) throws IOException {
        FaultyFileIo io = new FaultyFileIo();
        StatusFile f = file(io);
        f.writeBlocking(StatusFile.encode(content("1")));
        IOException crash = new IOException("crash at " + step);
        io.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeWrite(Path file, long position, int length) throws IOException {
                if (step == Step.WRITE_TEMP) {
                    // Leave half a temp file behind, like a crash in the middle of the write.
                    Files.write(dir.resolve(StatusFile.TEMP_NAME), "term=2\nvotedF".getBytes(StandardCharsets.UTF_8));
                    throw crash;
                }
            }

            @Override
            public void beforeForce(Path file, boolean metadata) throws IOException {
                if (step == Step.FSYNC_TEMP) {
                    throw crash;
                }
            }

            @Override
            public void beforeMove(Path from, Path to) throws IOException {
                if (step == Step.RENAME) {
                    throw crash;
                }
            }

            @Override
            public void beforeSyncDirectory(Path d) throws IOException {
                if (step == Step.FSYNC_DIR) {
                    throw crash;
                }
            }
        };
        IOException e = assertThrows(IOException.class, () -> f.writeBlocking(StatusFile.encode(content("2"))));
        assertEquals(crash, e);
        Map<String, String> read = file(FileIo.DEFAULT).loadBlocking();
        assertEquals(content(expectTerm), read, "after a crash at " + step);
        // And the next save goes through.
        io.hook = new FaultyFileIo.Hook() {
        };
        f.writeBlocking(StatusFile.encode(content("3")));
        assertEquals(content("3"), file(FileIo.DEFAULT).loadBlocking());
    }

    @Test
    void crashWhileWritingTheTempFileKeepsTheOld() throws IOException {
        crashAt(Step.WRITE_TEMP, "1");
    }

    @Test
    void crashBeforeTheTempFileIsSyncedKeepsTheOld() throws IOException {
        crashAt(Step.FSYNC_TEMP, "1");
    }

    @Test
    void crashBeforeTheRenameKeepsTheOld() throws IOException {
        crashAt(Step.RENAME, "1");
    }

    @Test
    void crashAfterTheRenameHasTheNew() throws IOException {
        crashAt(Step.FSYNC_DIR, "2");
    }

    @Test
    void missingFileIsANewGroup() throws IOException {
        assertTrue(file(FileIo.DEFAULT).loadBlocking().isEmpty());
        Files.write(dir.resolve(StatusFile.TEMP_NAME), "garbage".getBytes(StandardCharsets.UTF_8));
        assertTrue(file(FileIo.DEFAULT).loadBlocking().isEmpty(), "a leftover temp file is ignored");
    }

    @Test
    void damagedFileIsRefusedWithItsName() throws IOException {
        StatusFile f = file(FileIo.DEFAULT);
        f.writeBlocking(StatusFile.encode(content("7")));
        Path p = dir.resolve(StatusFile.FILE_NAME);
        byte[] b = Files.readAllBytes(p);
        b[5] ^= 1;
        Files.write(p, b);
        LogCorruptedException e = assertThrows(LogCorruptedException.class, f::loadBlocking);
        assertEquals(p, e.file());
        assertTrue(e.getMessage().contains("CRC"), e.getMessage());
    }
}
