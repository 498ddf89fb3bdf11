package io.poyang.codec;

/**
 * The protobuf wire types Poyang reads and writes (groups, types 3 and 4, are not supported), and
 * the values a {@link PbCallback#wireTypeOf} may return.
 *
 * <p>A repeated scalar field may arrive packed (one LEN field) or unpacked (one field per element)
 * whatever the .proto says, and protobuf parsers must accept both; a callback declares such a
 * field with {@link #PACKED_VARINT}, {@link #PACKED_FIXED32} or {@link #PACKED_FIXED64}, and gets
 * packed runs in {@code readBytes} and unpacked elements in {@code readVarint}/{@code readFixed32}/
 * {@code readFixed64}. Any other wire type for a known field is an error.
 */
public final class PbWireType {

    public static final int VARINT = 0;
    public static final int FIXED64 = 1;
    public static final int LEN = 2;
    public static final int FIXED32 = 5;

    private static final int PACKED_FLAG = 8;
    /** A repeated int32/int64/uint32/uint64/sint32/sint64/bool/enum field: LEN or VARINT. */
    public static final int PACKED_VARINT = PACKED_FLAG | VARINT;
    /** A repeated fixed64/sfixed64/double field: LEN or I64. */
    public static final int PACKED_FIXED64 = PACKED_FLAG | FIXED64;
    /** A repeated fixed32/sfixed32/float field: LEN or I32. */
    public static final int PACKED_FIXED32 = PACKED_FLAG | FIXED32;
    /** Returned by {@link PbCallback#wireTypeOf} for a field the callback does not know: it is skipped. */
    public static final int UNKNOWN = -1;

    private PbWireType() {
    }

    /** Whether a field declared {@code expected} (by {@code wireTypeOf}) may arrive as {@code actual}. */
    static boolean accepts(int expected, int actual) {
        if (expected >= 0 && (expected & PACKED_FLAG) != 0) {
            return actual == LEN || actual == (expected & 7);
        }
        return expected == actual;
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
            case PACKED_VARINT:
                return "LEN or VARINT (packed repeated)";
            case PACKED_FIXED64:
                return "LEN or I64 (packed repeated)";
            case PACKED_FIXED32:
                return "LEN or I32 (packed repeated)";
            case UNKNOWN:
                return "UNKNOWN";
            default:
                return "invalid(" + wireType + ")";
        }
    }
}
