package io.poyang.codec;

/** The protobuf wire types Poyang reads and writes (groups, types 3 and 4, are not supported). */
public final class PbWireType {

    public static final int VARINT = 0;
    public static final int FIXED64 = 1;
    public static final int LEN = 2;
    public static final int FIXED32 = 5;
    /** Returned by {@link PbCallback#wireTypeOf} for a field the callback does not know: it is skipped. */
    public static final int UNKNOWN = -1;

    private PbWireType() {
    }

    public static String name(int wireType) {
        switch (wireType) {
            case VARINT:
                return "VARINT";
            case FIXED64:
                return "I64";
            case LEN:
                return "LEN";
            case 3:
                return "SGROUP";
            case 4:
                return "EGROUP";
            case FIXED32:
                return "I32";
            default:
                return "invalid(" + wireType + ")";
        }
    }
}
