package io.poyang.codec;

import java.nio.ByteBuffer;
import java.util.Objects;

/** The test message {@code poyang.test.Nested}: {@code int64 id = 1; string name = 2;}. */
final class Nested implements Encodable {

    final long id;
    final String name;
    private final byte[] nameUtf8;
    private final int size;

    Nested(long id, String name) {
        this.id = id;
        this.name = name;
        this.nameUtf8 = PbUtil.utf8(name);
        this.size = PbUtil.sizeOfInt64Field(1, id) + PbUtil.sizeOfBytesField(2, nameUtf8);
    }

    @Override
    public int encodedSize() {
        return size;
    }

    @Override
    public boolean encode(EncodeContext c, ByteBuffer dest) {
        switch (c.stage) {
            case 0:
                if (!c.int64Field(dest, 1, id)) {
                    return false;
                }
            case 1:
                if (!c.bytesField(dest, 2, nameUtf8)) {
                    return false;
                }
            default:
                return true;
        }
    }

    String toText() {
        StringBuilder sb = new StringBuilder();
        if (id != 0) {
            sb.append("id: ").append(id).append(' ');
        }
        if (!name.isEmpty()) {
            sb.append("name: ").append(AllTypes.quote(nameUtf8)).append(' ');
        }
        return sb.toString().trim();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Nested && ((Nested) o).id == id && ((Nested) o).name.equals(name);
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, name);
    }

    @Override
    public String toString() {
        return "Nested{" + toText() + "}";
    }

    /** Decodes a Nested, reusable message after message. */
    static final class Callback extends PbCallback<Nested> {
        private long id;
        private String name;

        @Override
        protected int wireTypeOf(int field) {
            switch (field) {
                case 1:
                    return PbWireType.VARINT;
                case 2:
                    return PbWireType.LEN;
                default:
                    return PbWireType.UNKNOWN;
            }
        }

        @Override
        protected void begin(int messageLength) {
            id = 0;
            name = "";
        }

        @Override
        protected void readVarint(int field, long value) {
            id = value;
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            String s = parseString(piece, fieldLength, offsetInField);
            if (s != null) {
                name = s;
            }
        }

        @Override
        protected Nested end() {
            return new Nested(id, name);
        }
    }
}
