package io.poyang.buf;

/**
 * The sizes pooled buffers come in: powers of two from {@link #MIN_SIZE} to {@link #MAX_SIZE}.
 * A request is rounded up to the next class; requests over {@link #MAX_SIZE} are not pooled.
 */
public final class BufferSizeClasses {

    public static final int MIN_SHIFT = 6;
    public static final int MAX_SHIFT = 22;
    /** 64 bytes. */
    public static final int MIN_SIZE = 1 << MIN_SHIFT;
    /** 4 MiB. */
    public static final int MAX_SIZE = 1 << MAX_SHIFT;
    public static final int COUNT = MAX_SHIFT - MIN_SHIFT + 1;

    private BufferSizeClasses() {
    }

    /** The class index for a request of {@code size} bytes, or -1 when it is too large to pool. */
    public static int indexFor(int size) {
        if (size <= MIN_SIZE) {
            return 0;
        }
        if (size > MAX_SIZE) {
            return -1;
        }
        // ceil(log2(size)) - MIN_SHIFT
        return 32 - Integer.numberOfLeadingZeros(size - 1) - MIN_SHIFT;
    }

    /** The class index of a buffer whose capacity is exactly a class size, or -1 otherwise. */
    public static int indexOfCapacity(int capacity) {
        if (capacity < MIN_SIZE || capacity > MAX_SIZE || Integer.bitCount(capacity) != 1) {
            return -1;
        }
        return Integer.numberOfTrailingZeros(capacity) - MIN_SHIFT;
    }

    public static int sizeOf(int index) {
        return 1 << (index + MIN_SHIFT);
    }
}
