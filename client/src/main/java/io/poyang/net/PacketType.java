package io.poyang.net;

/** Field 1 of a packet (docs/proto/packet.proto, enum PacketType). */
public final class PacketType {

    /** Expects a response with the same seq. */
    public static final int REQUEST = 1;
    /** Answers a request. */
    public static final int RESPONSE = 2;
    /** Expects nothing back. */
    public static final int ONE_WAY = 3;

    private PacketType() {
    }

    public static String name(int type) {
        switch (type) {
            case REQUEST:
                return "REQUEST";
            case RESPONSE:
                return "RESPONSE";
            case ONE_WAY:
                return "ONE_WAY";
            default:
                return "UNKNOWN(" + type + ")";
        }
    }
}
