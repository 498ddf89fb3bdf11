package io.poyang.raft.server;

import io.poyang.net.BytesBody;
import io.poyang.net.BytesDecoder;
import io.poyang.net.NioClient;
import io.poyang.net.NioClientConfig;
import io.poyang.net.Peer;
import io.poyang.net.RemoteException;
import io.poyang.net.ResponseCode;
import io.poyang.net.WritePacket;
import io.poyang.raft.client.RaftCommands;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * RaftWriteRequest's fields may come in any order (protobuf's rule; protoc's encoders write them by
 * number). The server picks the body's decoder when the body starts, by the group_id and biz_type
 * seen so far; these tests send those fields after the body.
 */
class WriteFieldOrderTest {

    private static final int GROUP = 1;

    @TempDir
    Path dir;

    @Test
    void aBizTypeAfterARawBodyStillDecodesTheBodyAsThatType() throws Exception {
        withOneNode((c, client, p) -> {
            // group_id, then the body, then biz_type: the body starts while biz_type is still 0 (raw bytes)
            byte[] req = concat(varint(1, GROUP), bytes(3, typedBody(77)), varint(2, TestStateMachine.TYPED_BIZ_TYPE));
            byte[] answer = send(client, p, req);
            assertEquals(8, answer.length, "the write was applied and answered with its index");
            assertArrayEquals(new long[]{77}, c.checkIdentical(GROUP), "applied as the typed value 77");
        });
    }

    @Test
    void aBizTypeChangedAfterABodyDecodedAsAnotherTypeIsRefusedAndNothingIsWritten() throws Exception {
        withOneNode((c, client, p) -> {
            // the body is decoded as the typed message, then biz_type says "raw bytes": it cannot be undone
            byte[] req = concat(varint(1, GROUP), varint(2, TestStateMachine.TYPED_BIZ_TYPE),
                    bytes(3, typedBody(5)), varint(2, 0));
            ExecutionException e = assertThrows(ExecutionException.class, () -> send(client, p, req));
            assertTrue(e.getCause() instanceof RemoteException, e.getCause().toString());
            RemoteException r = (RemoteException) e.getCause();
            assertTrue(r.responseCode() != ResponseCode.SUCCESS, r.toString());
            assertTrue(r.getMessage().contains("biz_type"), r.getMessage());

            // the connection and the group go on
            byte[] ok = concat(varint(1, GROUP), varint(2, TestStateMachine.TYPED_BIZ_TYPE), bytes(3, typedBody(6)));
            assertEquals(8, send(client, p, ok).length);
            assertArrayEquals(new long[]{6}, c.checkIdentical(GROUP), "only the well-formed write was applied");
        });
    }

    @Test
    void aMalformedBodyWhoseBizTypeCameAfterItIsRefusedAndTheGroupGoesOn() throws Exception {
        withOneNode((c, client, p) -> {
            // field 1 of the typed message as a string: not a typed value. Accepted raw, it
            // would reach the log and fail the group when applied (decoded there by biz_type).
            byte[] bad = concat(varint(1, GROUP), bytes(3, bytes(1, new byte[]{'x'})),
                    varint(2, TestStateMachine.TYPED_BIZ_TYPE));
            ExecutionException e = assertThrows(ExecutionException.class, () -> send(client, p, bad));
            assertTrue(e.getCause() instanceof RemoteException, e.getCause().toString());
            // nothing was applied: BAD_REQUEST, not SYS_ERROR (which clients read as "outcome unknown")
            assertEquals(ResponseCode.BAD_REQUEST, ((RemoteException) e.getCause()).responseCode(), e.getCause().toString());

            byte[] ok = concat(varint(1, GROUP), varint(2, TestStateMachine.TYPED_BIZ_TYPE), bytes(3, typedBody(8)));
            assertEquals(8, send(client, p, ok).length, "the group goes on");
            assertArrayEquals(new long[]{8}, c.checkIdentical(GROUP));
        });
    }

    /** A test's steps, given a one-node cluster that has a leader and a plain client of its service port. */
    private interface Steps {
        void run(RaftCluster c, NioClient client, Peer p) throws Exception;
    }

    private void withOneNode(Steps steps) throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 1, GROUP).start()) {
            c.waitForLeader(GROUP);
            NioClient client = new NioClient(new NioClientConfig());
            client.start();
            try {
                steps.run(c, client, client.addPeer("127.0.0.1:" + c.server(1).servicePort()));
            } finally {
                client.stop();
            }
        }
    }

    private static byte[] send(NioClient client, Peer p, byte[] request) throws Exception {
        return client.sendRequest(p, WritePacket.request(RaftCommands.RAFT_WRITE, new BytesBody(request)),
                BytesDecoder.FACTORY, 10_000).get(15, TimeUnit.SECONDS);
    }

    /** message {int64 value = 1} */
    private static byte[] typedBody(long value) {
        return varint(1, value);
    }

    private static byte[] varint(int field, long value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        writeVarint(out, (long) field << 3);
        writeVarint(out, value);
        return out.toByteArray();
    }

    private static byte[] bytes(int field, byte[] value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        writeVarint(out, ((long) field << 3) | 2);
        writeVarint(out, value.length);
        out.write(value, 0, value.length);
        return out.toByteArray();
    }

    private static void writeVarint(ByteArrayOutputStream out, long v) {
        while ((v & ~0x7FL) != 0) {
            out.write((int) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        out.write((int) v);
    }

    private static byte[] concat(byte[]... parts) {
        ByteBuffer b = ByteBuffer.allocate(java.util.Arrays.stream(parts).mapToInt(x -> x.length).sum());
        for (byte[] x : parts) {
            b.put(x);
        }
        return b.array();
    }
}
