package io.poyang.net;

import io.poyang.codec.PbCallback;

/**
 * Handles one command. Registered with {@link NioNode#register} either on the I/O thread (for
 * quick, non-blocking work such as ping or echo) or with an executor. The body is decoded on the
 * I/O thread, in place, by the decoder this processor makes.
 *
 * @param <T> the decoded body
 */
public interface ReqProcessor<T> {

    /** A fresh decoder for one request's body (see {@link DecoderFactory}). */
    PbCallback<T> createDecoder();

    /**
     * Processes a request or one-way message. Returns the response, or null to answer later with
     * {@link ReqContext#respond} from any thread (a request must be answered exactly once; the
     * return value of a one-way message is ignored). A thrown exception, or a returned packet that
     * is not a response, becomes a {@link ResponseCode#SYS_ERROR} response.
     */
    WritePacket process(ReqContext context, T body);
}
