package io.poyang.raft.sm;

import java.io.IOException;
import java.io.OutputStream;

/** Streams a captured state out: what {@link StateMachine#takeSnapshot} returns. */
public interface SnapshotWriter {

    /**
     * Writes the captured state, on an I/O thread (blocking is fine) while the state machine goes on
     * applying entries on the dispatcher. Raft cuts the stream into CRC'd chunks.
     */
    void writeTo(OutputStream out) throws IOException;

    /** Called once on the dispatcher thread when the snapshot is written (or failed): drop what the capture held. */
    default void release() {
    }
}
