package io.poyang.net;

import io.poyang.codec.PbCallback;

/** Answers {@link Commands#ECHO} with the request's body, unchanged. Meant for the I/O thread. */
public final class EchoProcessor implements ReqProcessor<byte[]> {

    @Override
    public PbCallback<byte[]> createDecoder() {
        return new BytesDecoder();
    }

    @Override
    public WritePacket process(ReqContext context, byte[] body) {
        return WritePacket.response(new BytesBody(body));
    }
}
