package io.poyang.raft.store;

/**
 * The store hit an I/O error it cannot safely retry (a failed fsync, or a write that kept failing
 * after its retries) and refuses further appends. After a failed fsync the kernel may already have
 * dropped the dirty pages, so data the store believed written may be gone: the only safe way on is
 * to restart the group ({@code RaftServer.restartGroup}, {@code ./poyang admin restart-group}) or
 * the node, which runs recovery from what is really on disk. Check the disk (space, kernel log for
 * I/O errors) before restarting.
 */
public class LogStoreFailedException extends LogStoreException {

    public LogStoreFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
