package io.poyang.common;

/**
 * A bounded queue (pending requests or bytes) is full. The request was not accepted; the caller
 * may retry later, slow down, or raise the limit named in the message.
 */
public class FlowControlException extends PoyangException {

    public FlowControlException(String message) {
        super(ErrorCode.FLOW_CONTROL, message);
    }
}
