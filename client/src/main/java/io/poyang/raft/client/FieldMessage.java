package io.poyang.raft.client;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;
import io.poyang.net.DecoderFactory;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * A small protobuf message made only of scalar varint fields (int32, int64, bool, enum), packed
 * repeated varint fields, string fields and repeated string fields — the shape of raft's control messages (ReadIndex, the
 * admin commands of raft.proto). One class instead of one hand-written codec per message: the
 * message's schema (which field numbers are lists, which are strings) comes from its
 * {@link Schema}; everything else is a varint (and a field that arrives with another wire type is
 * skipped as unknown, so a newer peer may add strings and lists). Encoded exactly as protoc encodes the same message
 * (fields in number order, zero scalars and empty lists omitted). Not for hot paths that carry
 * bulk data; immutable once built.
 */
public final class FieldMessage implements Encodable {

    private static final int MAX_FIELD = 31;

    /** Which fields of a message are packed lists, strings and string lists; all others are varints. */
    public static final class Schema implements DecoderFactory<FieldMessage> {
        private final long listFields;
        private final long stringFields;
        private final long stringListFields;
        private final String name;

        /**
         * @param name         the message name (for error messages)
         * @param listFields   field numbers of packed repeated varints
         * @param stringFields field numbers of strings
         */
        public Schema(String name, int[] listFields, int[] stringFields) {
            this(name, listFields, stringFields, new int[0]);
        }

        /** @param stringListFields field numbers of repeated strings */
        public Schema(String name, int[] listFields, int[] stringFields, int[] stringListFields) {
            this.name = name;
            this.listFields = mask(listFields);
            this.stringFields = mask(stringFields);
            this.stringListFields = mask(stringListFields);
            if ((this.listFields & this.stringFields) != 0 || (this.listFields & this.stringListFields) != 0
                    || (this.stringFields & this.stringListFields) != 0) {
                throw new IllegalArgumentException("a field of " + name + " is given two kinds");
            }
        }

        private static long mask(int[] fields) {
            long m = 0;
            for (int f : fields) {
                if (f < 1 || f > MAX_FIELD) {
                    throw new IllegalArgumentException("field numbers of a FieldMessage are 1.." + MAX_FIELD + ": " + f);
                }
                m |= 1L << f;
            }
            return m;
        }

        boolean isList(int f) {
            return f <= MAX_FIELD && (listFields & (1L << f)) != 0;
        }

        boolean isString(int f) {
            return f <= MAX_FIELD && (stringFields & (1L << f)) != 0;
        }

        boolean isStringList(int f) {
            return f <= MAX_FIELD && (stringListFields & (1L << f)) != 0;
        }

        boolean isVarint(int f) {
            return f >= 1 && f <= MAX_FIELD && !isList(f) && !isString(f) && !isStringList(f);
        }

        public Builder builder() {
            return new Builder(this);
        }

        @Override
        public PbCallback<FieldMessage> create() {
            return new Decoder<>(this, m -> m);
        }

        /** Decodes this message and hands it to {@code map} (for typed views such as {@link GroupStatus}). */
        public <T> DecoderFactory<T> mapped(java.util.function.Function<FieldMessage, T> map) {
            return () -> new Decoder<>(this, map);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** Sets fields, then {@link #build()}. */
    public static final class Builder {
        private final Schema schema;
        private final long[] scalars = new long[MAX_FIELD + 1];
        private final long[][] lists = new long[MAX_FIELD + 1][];
        private final String[] strings = new String[MAX_FIELD + 1];
        private final String[][] stringLists = new String[MAX_FIELD + 1][];

        Builder(Schema schema) {
            this.schema = schema;
        }

        public Builder set(int field, long value) {
            check(field, schema.isVarint(field), "a varint");
            scalars[field] = value;
            return this;
        }

        public Builder set(int field, boolean value) {
            return set(field, value ? 1 : 0);
        }

        public Builder set(int field, String value) {
            check(field, schema.isString(field), "a string");
            strings[field] = value;
            return this;
        }

        public Builder set(int field, int[] values) {
            check(field, schema.isList(field), "a list");
            long[] l = new long[values == null ? 0 : values.length];
            for (int i = 0; i < l.length; i++) {
                l[i] = values[i];
            }
            lists[field] = l;
            return this;
        }

        public Builder set(int field, long[] values) {
            check(field, schema.isList(field), "a list");
            lists[field] = values == null ? new long[0] : values.clone();
            return this;
        }

        /** A repeated string field (null elements are sent as empty strings). */
        public Builder set(int field, String[] values) {
            check(field, schema.isStringList(field), "a string list");
            String[] l = values == null ? new String[0] : values.clone();
            for (int i = 0; i < l.length; i++) {
                if (l[i] == null) {
                    l[i] = "";
                }
            }
            stringLists[field] = l;
            return this;
        }

        private void check(int field, boolean ok, String what) {
            if (field < 1 || field > MAX_FIELD || !ok) {
                throw new IllegalArgumentException("field " + field + " of " + schema + " is not " + what);
            }
        }

        public FieldMessage build() {
            return new FieldMessage(schema, scalars.clone(), lists.clone(), strings.clone(), stringLists.clone());
        }
    }

    private final Schema schema;
    private final long[] scalars;
    private final long[][] lists;
    private final String[] strings;
    private final byte[][] stringBytes;
    private final String[][] stringLists;
    private final java.util.List<byte[]>[] stringListBytes;
    private final int size;

    @SuppressWarnings("unchecked")
    private FieldMessage(Schema schema, long[] scalars, long[][] lists, String[] strings, String[][] stringLists) {
        this.schema = schema;
        this.scalars = scalars;
        this.lists = lists;
        this.strings = strings;
        this.stringLists = stringLists;
        this.stringBytes = new byte[MAX_FIELD + 1][];
        this.stringListBytes = new java.util.List[MAX_FIELD + 1];
        int s = 0;
        for (int f = 1; f <= MAX_FIELD; f++) {
            if (stringLists[f] != null) {
                java.util.List<byte[]> bytes = new java.util.ArrayList<>(stringLists[f].length);
                for (String v : stringLists[f]) {
                    byte[] b = PbUtil.utf8(v);
                    bytes.add(b);
                    // every element is written, an empty one too (tag and a zero length)
                    s += PbUtil.sizeOfTag(f) + PbUtil.sizeOfUnsignedVarint32(b.length) + b.length;
                }
                stringListBytes[f] = bytes;
            } else if (lists[f] != null) {
                s += PbUtil.sizeOfPackedVarint64Field(f, lists[f], lists[f].length);
            } else if (strings[f] != null) {
                if (!strings[f].isEmpty()) {
                    stringBytes[f] = PbUtil.utf8(strings[f]);
                    s += PbUtil.sizeOfBytesField(f, stringBytes[f]);
                }
            } else {
                s += PbUtil.sizeOfInt64Field(f, scalars[f]);
            }
        }
        this.size = s;
    }

    public long getLong(int field) {
        return field <= MAX_FIELD ? scalars[field] : 0;
    }

    public int getInt(int field) {
        return (int) getLong(field);
    }

    public boolean getBool(int field) {
        return getLong(field) != 0;
    }

    /** A string field; "" when absent. */
    public String getString(int field) {
        String s = field <= MAX_FIELD ? strings[field] : null;
        return s == null ? "" : s;
    }

    /** A repeated string field; empty when absent. */
    public String[] getStrings(int field) {
        String[] l = field <= MAX_FIELD ? stringLists[field] : null;
        return l == null ? new String[0] : l.clone();
    }

    /** A list field; empty when absent. */
    public long[] getLongs(int field) {
        long[] l = field <= MAX_FIELD ? lists[field] : null;
        return l == null ? new long[0] : l.clone();
    }

    /** A list field as ints; empty when absent. */
    public int[] getInts(int field) {
        long[] l = field <= MAX_FIELD ? lists[field] : null;
        int[] r = new int[l == null ? 0 : l.length];
        for (int i = 0; i < r.length; i++) {
            r[i] = (int) l[i];
        }
        return r;
    }

    @Override
    public int encodedSize() {
        return size;
    }

    @Override
    public boolean encode(EncodeContext c, ByteBuffer dest) {
        // stage = the field being written
        if (c.stage == 0) {
            c.stage = 1;
        }
        while (c.stage <= MAX_FIELD) {
            int f = c.stage;
            boolean done;
            if (stringListBytes[f] != null) {
                done = c.repeatedBytesField(dest, f, stringListBytes[f]);
            } else if (lists[f] != null) {
                done = c.packedInt64Field(dest, f, lists[f], lists[f].length);
            } else if (stringBytes[f] != null) {
                done = c.bytesField(dest, f, stringBytes[f]);
            } else if (strings[f] != null) {
                done = true;
            } else {
                done = c.int64Field(dest, f, scalars[f]);
            }
            if (!done) {
                return false;
            }
            c.stage = f + 1;
        }
        return true;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof FieldMessage)) {
            return false;
        }
        FieldMessage m = (FieldMessage) o;
        return Arrays.equals(scalars, m.scalars) && Arrays.deepEquals(norm(lists), norm(m.lists))
                && Arrays.equals(norm(strings), norm(m.strings)) && Arrays.deepEquals(norm(stringLists),
                norm(m.stringLists));
    }

    private static long[][] norm(long[][] l) {
        long[][] r = new long[l.length][];
        for (int i = 0; i < l.length; i++) {
            r[i] = l[i] == null || l[i].length == 0 ? null : l[i];
        }
        return r;
    }

    private static String[][] norm(String[][] l) {
        String[][] r = new String[l.length][];
        for (int i = 0; i < l.length; i++) {
            r[i] = l[i] == null || l[i].length == 0 ? null : l[i];
        }
        return r;
    }

    private static String[] norm(String[] s) {
        String[] r = new String[s.length];
        for (int i = 0; i < s.length; i++) {
            r[i] = s[i] == null || s[i].isEmpty() ? null : s[i];
        }
        return r;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(scalars);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(schema.toString()).append('{');
        boolean first = true;
        for (int f = 1; f <= MAX_FIELD; f++) {
            String v = null;
            if (stringLists[f] != null && stringLists[f].length > 0) {
                v = Arrays.toString(stringLists[f]);
            } else if (lists[f] != null && lists[f].length > 0) {
                v = Arrays.toString(lists[f]);
            } else if (strings[f] != null && !strings[f].isEmpty()) {
                v = '"' + strings[f] + '"';
            } else if (lists[f] == null && strings[f] == null && stringLists[f] == null && scalars[f] != 0) {
                v = Long.toString(scalars[f]);
            }
            if (v != null) {
                b.append(first ? "" : ", ").append(f).append('=').append(v);
                first = false;
            }
        }
        return b.append('}').toString();
    }

    /**
     * Decodes into one growable array per list field, so a message whose list fields alternate
     * (2, 3, 2, 3, ...) costs what its elements do, not a copy of the list at every switch.
     */
    private static final class Decoder<T> extends PbCallback<T> {
        private final Schema schema;
        private final java.util.function.Function<FieldMessage, T> map;
        private Builder b;
        private long[][] lists;
        private int[] listCounts;
        private java.util.ArrayList<String>[] stringLists;
        private int listField;
        private final LongSink sink = this::add;

        Decoder(Schema schema, java.util.function.Function<FieldMessage, T> map) {
            super(true);
            this.schema = schema;
            this.map = map;
        }

        @Override
        protected int wireTypeOf(int field) {
            if (schema.isString(field) || schema.isStringList(field)) {
                return PbWireType.LEN;
            }
            if (schema.isList(field)) {
                return PbWireType.PACKED_VARINT;
            }
            return field <= MAX_FIELD ? PbWireType.VARINT : PbWireType.UNKNOWN;
        }

        @Override
        protected int wireTypeOf(int field, int arrivedWireType) {
            int t = wireTypeOf(field);
            // A field the schema does not name is a varint only if it comes as one. Otherwise it is
            // a field of a newer peer's message (a string, bytes, a fixed number): skipped, as
            // protobuf skips unknown fields, rather than refusing the whole message.
            if (t == PbWireType.VARINT && arrivedWireType != PbWireType.VARINT) {
                return PbWireType.UNKNOWN;
            }
            return t;
        }

        @Override
        protected void begin(int messageLength) {
            b = schema.builder();
            lists = null;   // made at the first list element: most messages have none
            listCounts = null;
            stringLists = null;
        }

        @Override
        protected void readVarint(int field, long value) {
            if (schema.isList(field)) {
                listField = field;
                add(value);
            } else {
                b.scalars[field] = value;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            if (schema.isString(field)) {
                String s = parseString(piece, fieldLength, offsetInField);
                if (s != null) {
                    b.strings[field] = s;
                }
            } else if (schema.isStringList(field)) {
                String s = fieldLength == 0 ? "" : parseString(piece, fieldLength, offsetInField);
                if (s != null) {
                    if (stringLists == null) {
                        stringLists = newStringLists();
                    }
                    if (stringLists[field] == null) {
                        stringLists[field] = new java.util.ArrayList<>();
                    }
                    stringLists[field].add(s);
                }
            } else {
                listField = field;
                parsePackedVarints(piece, fieldLength, offsetInField, sink);
            }
        }

        @SuppressWarnings("unchecked")
        private static java.util.ArrayList<String>[] newStringLists() {
            return new java.util.ArrayList[MAX_FIELD + 1];
        }

        private void add(long v) {
            if (lists == null) {
                lists = new long[MAX_FIELD + 1][];
                listCounts = new int[MAX_FIELD + 1];
            }
            int f = listField;
            long[] l = lists[f];
            int n = listCounts[f];
            if (l == null) {
                l = new long[4];
                lists[f] = l;
            } else if (n == l.length) {
                l = Arrays.copyOf(l, n * 2);
                lists[f] = l;
            }
            l[n] = v;
            listCounts[f] = n + 1;
        }

        @Override
        protected T end() {
            for (int f = 1; f <= MAX_FIELD && (lists != null || stringLists != null); f++) {
                if (lists != null && lists[f] != null) {
                    b.lists[f] = Arrays.copyOf(lists[f], listCounts[f]);
                }
                if (stringLists != null && stringLists[f] != null) {
                    b.stringLists[f] = stringLists[f].toArray(new String[0]);
                }
            }
            return map.apply(b.build());
        }
    }
}
