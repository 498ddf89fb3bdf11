package io.poyang.net;

/**
 * The remote side answered with an error: {@link #responseCode()} says which (see
 * {@link ResponseCode}); for {@link ResponseCode#BIZ_ERROR} {@link #bizCode()} holds the command's
 * own code, for {@link ResponseCode#NOT_LEADER} the leader's node id (0 when unknown).
 */
public class RemoteException extends NetException {

    private final int responseCode;
    private final int bizCode;
    private final String remoteMessage;

    public RemoteException(int responseCode, int bizCode, String remoteMessage) {
        super(describe(responseCode, bizCode, remoteMessage));
        this.responseCode = responseCode;
        this.bizCode = bizCode;
        this.remoteMessage = remoteMessage;
    }

    private static String describe(int responseCode, int bizCode, String remoteMessage) {
        StringBuilder sb = new StringBuilder("remote error ").append(ResponseCode.name(responseCode));
        if (responseCode == ResponseCode.BIZ_ERROR) {
            sb.append(" (biz code ").append(bizCode).append(')');
        } else if (bizCode != 0) {
            sb.append(" (detail ").append(bizCode).append(')');
        }
        if (remoteMessage != null && !remoteMessage.isEmpty()) {
            sb.append(": ").append(remoteMessage);
        }
        return sb.toString();
    }

    public int responseCode() {
        return responseCode;
    }

    public int bizCode() {
        return bizCode;
    }

    /** The message the remote side sent, or null. */
    public String remoteMessage() {
        return remoteMessage;
    }
}
