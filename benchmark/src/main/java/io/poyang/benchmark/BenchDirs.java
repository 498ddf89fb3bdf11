package io.poyang.benchmark;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The benchmark's data directories: created fresh under {@code $POYANG_BENCH_DIR} (or the system
 * temp directory) and deleted when the run ends, also when it is interrupted. A directory made with
 * {@link #create} is remembered until {@link #delete}; {@link BenchCommand}'s exit hook deletes the
 * ones still there after it closed the scenario ({@link #deleteLeftovers}), which covers a Ctrl-C
 * that comes before a scenario could record its directory for its own close.
 */
public final class BenchDirs {

    private static final Set<Path> LIVE = ConcurrentHashMap.newKeySet();

    private BenchDirs() {
    }

    /** Where the directories go: {@code $POYANG_BENCH_DIR}, else the system temp directory. */
    public static Path parent() {
        String base = System.getenv("POYANG_BENCH_DIR");
        return Paths.get(base != null && !base.isEmpty() ? base : System.getProperty("java.io.tmpdir"));
    }

    /** A new directory named {@code prefix} + a random number, remembered for {@link #deleteLeftovers}. */
    public static Path create(String prefix) throws IOException {
        Path dir = Files.createTempDirectory(parent(), prefix);
        LIVE.add(dir);
        return dir;
    }

    /** Deletes a directory made by {@link #create} (what is already gone is skipped) and forgets it. */
    public static void delete(Path dir) throws IOException {
        deleteTree(dir);
        LIVE.remove(dir);
    }

    /** Deletes every directory {@link #create} made that no {@link #delete} removed; reports failures on stderr. */
    static void deleteLeftovers() {
        for (Path dir : LIVE) {
            try {
                delete(dir);
            } catch (IOException | RuntimeException e) {
                System.err.println("bench: could not delete " + dir + ": " + e);
            }
        }
    }

    /** Deletes {@code root} and everything below it; files that vanish meanwhile are skipped. */
    public static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        Files.walkFileTree(root, new SimpleFileVisitor<Path>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                deleteIfExists(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException exc) throws IOException {
                if (exc instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE;
                }
                throw exc;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
                deleteIfExists(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    private static void deleteIfExists(Path p) throws IOException {
        try {
            Files.deleteIfExists(p);
        } catch (NoSuchFileException e) {
            // gone already
        }
    }
}
