package io.poyang.raft.store;

import io.poyang.fiber.Dispatcher;
import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FiberGroup;
import io.poyang.fiber.FrameCallResult;

import java.io.PrintStream;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;

/**
 * The child process of {@link CrashTest}: opens the store, prints {@code START <lastIndex>}, then
 * appends as fast as it can and prints {@code P <index>} each time the store reports an index
 * persisted, until it is killed. Bodies are {@code bodyFor(index, round)}. It also declares the
 * commit index, saves the status now and then and deletes old segments, so a kill can land in any
 * of those. A third argument keeps that many segment files freed by the deletions for reuse
 * ({@link LogStoreConfig#recycledSegments}; 0 without it); it prints {@code RECYCLED} for each
 * file renamed to become a spare. A fourth argument, {@code journal}, writes through a node log journal
 * ({@link LogJournal}, 3 files of 4 MiB) in the store directory's parent.
 */
public final class CrashWriter {

    public static void main(String[] args) throws Exception {
        String dir = args[0];
        int round = Integer.parseInt(args[1]);
        int recycledSegments = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        boolean journalled = args.length > 3 && args[3].equals("journal");
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, "UTF-8");
        Dispatcher dispatcher = new Dispatcher("crash-writer");
        dispatcher.start();
        FiberGroup group = new FiberGroup("crash-writer", dispatcher);
        dispatcher.startGroup(group).get();
        ExecutorService io = LogStoreConfig.newIoExecutor("crash-io", 3);
        // Prints "RECYCLED" for each segment file renamed to a new start position, so the test
        // knows the kills met recycling at all.
        FaultyFileIo fileIo = new FaultyFileIo();
        fileIo.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeMove(java.nio.file.Path from, java.nio.file.Path to) {
                if (from.getParent().getFileName().toString().equals("log")) {
                    out.println("RECYCLED " + from.getFileName() + " " + to.getFileName());
                    out.flush();
                }
            }
        };
        LogStoreConfig config = new LogStoreConfig(Paths.get(dir), io).fileIo(fileIo).segmentBytes(1 << 20).indexEntriesPerFile(4096)
                .indexFlushEntries(2048).recycledSegments(recycledSegments);
        if (journalled) {
            config.journal(LogJournal.open("crash", Paths.get(dir).getParent(), FileIo.DEFAULT, 3, LogJournal.MIN_FILE_BYTES));
        }
        LogStore store = new LogStore("crash", group, config);
        store.setPersistedListener(p -> {
            out.println("P " + p);
            out.flush();
            store.setCommitIndex(p);
        });
        group.fireFiber("writer", new WriterFrame(store, round, out));
        Thread.sleep(Long.MAX_VALUE);   // until killed
    }

    private static final class WriterFrame extends FiberFrame<Void> {
        private final LogStore store;
        private final int round;
        private final PrintStream out;
        private int term;
        private long batches;
        private long lastDelete;

        WriterFrame(LogStore store, int round, PrintStream out) {
            this.store = store;
            this.round = round;
            this.out = out;
        }

        @Override
        public FrameCallResult execute(Object input) {
            return Fiber.call(store.init(), this::started);
        }

        private FrameCallResult started(RecoveredState s) {
            term = s.getLastTerm() + 1;   // a new "leader" each round
            out.println("START " + s.getLastIndex() + " " + s.getFirstIndex());
            out.flush();
            return loop(null);
        }

        private FrameCallResult loop(Void v) {
            long last = store.lastIndex();
            if (last - store.persistedIndex() > 3000) {
                return store.persistedCondition().await(this::loop);
            }
            int n = 1 + (int) (batches++ % 37);
            List<LogItem> items = new ArrayList<>(n);
            int prev = store.lastTerm();
            for (long i = last + 1; i <= last + n; i++) {
                items.add(new LogItem(LogItem.TYPE_NORMAL, round, term, prev, i, i, null,
                        new ByteBody(CrashTest.bodyFor(i, round))));
                prev = term;
            }
            store.append(items);
            if (batches % 500 == 0) {
                return Fiber.call(store.saveStatus(term, 1, store.persistedIndex()), this::afterSave);
            }
            return Fiber.yield(this::loop);
        }

        private FrameCallResult afterSave(Void v) {
            long commit = store.commitIndex();
            if (commit - lastDelete > 60_000) {
                lastDelete = commit;
                return Fiber.call(store.deleteBelow(commit - 30_000), this::loop);
            }
            return loop(null);
        }
    }
}
